import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectMcpClient, resultText } from "../harness/mcp-clients";
import { loadCatalog } from "../harness/catalog-admin";
import { bearer, boundedFetch, signInAs, type OAuthSession } from "../harness/oauth-sign-in";
import { runCli } from "../../unit/cli/cli-test-io";
import { EXPERT, startDevTeamServer, type DevTeamServer } from "./dev-team-server";

/**
 * Limits, skill access and members through `wrangler dev` with OAuth on: real sign-ins (dev
 * identity provider), a real MCP client, the fake OpenAI-compatible model counting requests,
 * and the CLI against the same Worker.
 */
describe("team limits, skill access and members through wrangler dev", () => {
  let server: DevTeamServer;
  let base: string;
  let alice: OAuthSession;
  let bob: OAuthSession;

  beforeAll(async () => {
    server = await startDevTeamServer();
    base = server.dev.baseUrl;
    const expert = {
      name: EXPERT,
      description: "Answers from the team's notes.",
      provider: "openai-compatible" as const,
      base_url: server.fake.baseURL,
      model: "fake-cheap",
      budget: { max_steps: 2, timeout_ms: 20_000 },
    };
    await loadCatalog(
      base,
      {
        skills: {
          default: { limits: { per_user: { runs_per_day: 1 } }, experts: [expert] },
          private: { access: { users: ["bob"] }, experts: [expert] },
        },
      },
      { Authorization: `Bearer ${server.adminToken}` },
    );
    alice = await signInAs(base, "alice");
    bob = await signInAs(base, "bob");
  });
  afterAll(async () => {
    await server?.stop();
  });

  it("a member over a limit gets the limit error, and the model gets no request", async () => {
    const client = await connectMcpClient("v2-2025", `${base}/mcp`, { headers: bearer(alice) });
    try {
      const first = await client.callTool(EXPERT, { query: "first question" });
      expect(first.isError ?? false).toBe(false);
      const requestsAfterFirst = server.fake.requests.length;
      expect(requestsAfterFirst).toBeGreaterThan(0);

      const second = await client.callTool(EXPERT, { query: "second question" });
      expect(second.isError).toBe(true);
      expect(resultText(second)).toMatch(
        /Usage limit reached: your runs_per_day in skill "default" is 1 \(used 1\); it resets at \d{4}-\d\d-\d\dT00:00:00\.000Z/,
      );
      expect(server.fake.requests.length).toBe(requestsAfterFirst);
    } finally {
      await client.close();
    }
    const limits = await boundedFetch(`${base}/admin/api/skills/default/limits`, { headers: { Authorization: `Bearer ${server.adminToken}` } });
    expect(await limits.json()).toMatchObject({ perUser: [{ userId: "dev-alice", runs_per_day: 1, runs_in_flight: 0 }] });
  });

  it("a skill with access lists is a 403 for others and served to the users it names", async () => {
    await expect(connectMcpClient("v2-2025", `${base}/s/private/mcp`, { headers: bearer(alice) })).rejects.toThrow(/You do not have access to skill/);
    const client = await connectMcpClient("v2-2025", `${base}/s/private/mcp`, { headers: bearer(bob) });
    try {
      expect((await client.listTools()).map((tool) => tool.name)).toEqual([EXPERT]);
    } finally {
      await client.close();
    }
  });

  it("`slipsnisse members` lists who signed in; `members revoke` cuts their token at once", async () => {
    const flags = ["--url", base, "--token", server.adminToken];
    const listed = await runCli(["members", ...flags]);
    expect(listed).toMatchObject({ code: 0 });
    expect(listed.stdout).toMatch(/dev-alice\s+alice\s+member/);
    expect(listed.stdout).toMatch(/dev-bob\s+bob\s+member/);

    const revoked = await runCli(["members", "revoke", "bob", ...flags]);
    expect(revoked).toMatchObject({ code: 0 });
    expect(revoked.stdout).toContain("Revoked 1 grant(s) of bob (dev-bob)");
    // Bob's access token has most of its hour left; the next request is refused.
    const refused = await boundedFetch(`${base}/s/private/mcp`, {
      method: "POST",
      headers: { "Content-Type": "application/json", ...bearer(bob) },
      body: "{}",
    });
    expect(refused.status).toBe(401);
    // Alice keeps working.
    const client = await connectMcpClient("v2-2025", `${base}/mcp`, { headers: bearer(alice) });
    await client.close();

    const unknown = await runCli(["members", "revoke", "nobody", ...flags]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain("fix: List members with GET /admin/api/members");
  });
});
