import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectMcpClient, resultText, type McpClientKind, type ToolCallResult } from "../harness/mcp-clients";
import { bearer, boundedFetch, signInAs, type OAuthSession } from "../harness/oauth-sign-in";
import { EXPERT, startDevTeamServer, type DevTeamServer } from "./dev-team-server";

const THREAD_META = "slipsnisse.dev/thread";
/** With alice and bob, ten distinct users: what the load test signs in against one wrangler dev. */
const LOAD_USERS = Array.from({ length: 8 }, (_, i) => `load${String(i + 1).padStart(2, "0")}`);

function threadOf(result: ToolCallResult): string {
  const thread = result._meta?.[THREAD_META];
  if (typeof thread !== "string") throw new Error(`no thread in ${JSON.stringify(result._meta)}`);
  return thread;
}

/**
 * The team-access flow against `wrangler dev` as MCP clients run it: discovery from the 401,
 * dynamic registration, PKCE, code exchange (harness/oauth-sign-in.ts, the MCP SDK's own
 * client OAuth functions), then a real SDK v2 client with the bearer token.
 */
describe("OAuth team access through wrangler dev (dev identity provider, alice and bob)", () => {
  let server: DevTeamServer;
  let base: string;
  let alice: OAuthSession;
  let bob: OAuthSession;

  beforeAll(async () => {
    server = await startDevTeamServer({ DEV_USERS: ["alice", "bob", ...LOAD_USERS].join(",") });
    base = server.dev.baseUrl;
    alice = await signInAs(base, "alice");
    bob = await signInAs(base, "bob");
  });
  afterAll(async () => {
    await server?.stop();
  });

  it("answers every MCP endpoint without a token with 401 and where to discover the authorization server", async () => {
    for (const path of ["/mcp", "/s/default/mcp", "/sse"]) {
      const response = await boundedFetch(`${base}${path}`, { method: "POST", headers: { "Content-Type": "application/json" }, body: "{}" });
      expect(response.status, path).toBe(401);
      expect(response.headers.get("WWW-Authenticate"), path).toContain(`resource_metadata="${base}/.well-known/oauth-protected-resource"`);
    }
    expect(alice.metadata.code_challenge_methods_supported).toEqual(["S256"]);
    expect(alice.resource.replace(/\/$/, "")).toBe(base);
    expect(alice.clientId).not.toBe(bob.clientId);
  });

  const kinds: McpClientKind[] = ["v2-2025", "v2-2026"];
  for (const kind of kinds) {
    it(`lets a signed-in member list and call the expert with a real MCP client (${kind})`, async () => {
      const client = await connectMcpClient(kind, `${base}/mcp`, { headers: bearer(alice) });
      try {
        expect((await client.listTools()).map((tool) => tool.name)).toEqual([EXPERT]);
        const result = await client.callTool(EXPERT, { query: `release date (${kind})` });
        expect(result.isError ?? false).toBe(false);
        expect(resultText(result)).toContain(`notes say: release date (${kind})`);
        expect(threadOf(result)).toMatch(/^th_/);
      } finally {
        await client.close();
      }
      // Rule 3: the inbound token never reaches the model provider.
      expect(JSON.stringify(server.fake.requests)).not.toContain(alice.accessToken);
    });
  }

  it("refuses a missing, forged or tampered token with 401 and a WWW-Authenticate challenge, and no client connects with one", async () => {
    const [userId, grantId] = alice.accessToken.split(":");
    const tampered = `${alice.accessToken.slice(0, -4)}${alice.accessToken.endsWith("AAAA") ? "BBBB" : "AAAA"}`;
    const cases: Record<string, Record<string, string>> = {
      missing: {},
      forged: { Authorization: "Bearer not-a-real-token" },
      "forged with a real grant id": { Authorization: `Bearer ${userId}:${grantId}:0000000000000000000000000000000000` },
      tampered: { Authorization: `Bearer ${tampered}` },
    };
    for (const [name, headers] of Object.entries(cases)) {
      const response = await boundedFetch(`${base}/mcp`, { method: "POST", headers: { "Content-Type": "application/json", ...headers }, body: "{}" });
      expect(response.status, name).toBe(401);
      const challenge = response.headers.get("WWW-Authenticate") ?? "";
      expect(challenge, name).toMatch(/^Bearer /);
      expect(challenge, name).toContain("resource_metadata=");
      if (name !== "missing") expect(challenge, name).toContain('error="invalid_token"');
    }
    await expect(connectMcpClient("v2-2025", `${base}/mcp`, { headers: { Authorization: `Bearer ${tampered}` } })).rejects.toThrow();
  });

  it("rotates the refresh token: the new tokens work, a rotated-out refresh token is refused", async () => {
    const session = await signInAs(base, "alice");
    const first = session.refreshToken;
    const second = (await session.refresh()).refreshToken;
    expect(second).not.toBe(first);
    // workers-oauth-provider keeps the previous refresh token usable until its successor is
    // used (a client whose refresh response was lost can retry); using the successor ends that.
    const third = await session.refresh();
    expect(third.refreshToken).not.toBe(second);

    const client = await connectMcpClient("v2-2025", `${base}/mcp`, { headers: bearer(third) });
    expect((await client.listTools()).map((tool) => tool.name)).toEqual([EXPERT]);
    await client.close();

    const reused = await boundedFetch(session.metadata.token_endpoint, {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ grant_type: "refresh_token", refresh_token: first, client_id: session.clientId }).toString(),
    });
    expect(reused.status).toBe(400);
    expect(await reused.json()).toMatchObject({ error: "invalid_grant" });
  });

  it("keeps a thread handle minted for alice private: bob is told it does not exist, alice continues it", async () => {
    const asAlice = await connectMcpClient("v2-2025", `${base}/mcp`, { headers: bearer(alice) });
    const asBob = await connectMcpClient("v2-2025", `${base}/mcp`, { headers: bearer(bob) });
    try {
      const first = await asAlice.callTool(EXPERT, { query: "alice's private question" });
      expect(first.isError ?? false).toBe(false);
      const thread = threadOf(first);

      const stolen = await asBob.callTool(EXPERT, { query: "what did alice ask?", thread });
      expect(stolen.isError).toBe(true);
      expect(resultText(stolen)).toContain(`Thread ${thread} does not exist`);
      expect(resultText(stolen)).not.toContain("alice's private question");

      const followUp = await asAlice.callTool(EXPERT, { query: "and a follow-up", thread });
      expect(followUp.isError ?? false).toBe(false);
      expect(threadOf(followUp)).toBe(thread);
      // The follow-up ran with alice's earlier turn in the model's context.
      expect(JSON.stringify(server.fake.requests.at(-1)?.messages)).toContain("alice's private question");
    } finally {
      await Promise.allSettled([asAlice.close(), asBob.close()]);
    }
  });

  it("keeps a member out of the admin API, which ADMIN_TOKEN opens", async () => {
    const asMember = await boundedFetch(`${base}/admin/api/skills`, { headers: bearer(alice) });
    expect(asMember.status).toBe(403);
    const asAutomation = await boundedFetch(`${base}/admin/api/skills`, { headers: { Authorization: `Bearer ${server.adminToken}` } });
    expect(asAutomation.status).toBe(200);
  });

  it("signs ten distinct users in at once, each with a grant of its own", async () => {
    const sessions = await Promise.all(["alice", "bob", ...LOAD_USERS].map((login) => signInAs(base, login)));
    // workers-oauth-provider tokens read `<userId>:<grantId>:<secret>`; the user id is the dev login's.
    expect(sessions.map((session) => session.accessToken.split(":")[0])).toEqual(["alice", "bob", ...LOAD_USERS].map((login) => `dev-${login}`));
    const answers = await Promise.all(
      sessions.map(async (session) => (await boundedFetch(`${base}/mcp`, { method: "POST", headers: bearer(session), body: "{}" })).status),
    );
    expect(answers.every((status) => status !== 401)).toBe(true);
  });

  it("refuses to sign in a login that DEV_USERS does not list, with no code issued", async () => {
    await expect(signInAs(base, "mallory")).rejects.toThrow(/answered 403.*does not sign in "mallory"/);
  });
});
