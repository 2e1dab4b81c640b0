import type { Browser, BrowserContext } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadCatalog } from "../harness/catalog-admin";
import { chromiumSkipReason, sharedChromium, loopbackOnlyContext } from "../harness/chromium-browser";
import { type ChatRequest, type ScriptedReply, textReply, toolCallsReply, toolResultMessages } from "../harness/fake-openai-server";
import { connectMcpClient, resultText } from "../harness/mcp-clients";
import { bearer, signInAs, type OAuthSession } from "../harness/oauth-sign-in";
import { EXPERT as DOWNSTREAM_EXPERT, startDevTeamServer, type DevTeamServer } from "../oauth/dev-team-server";

const EXPERT = "ask_their_notes";

/** The fake model of the front instance: ask the downstream's expert, then report its answer. */
function askThenAnswer(request: ChatRequest): ScriptedReply {
  const results = toolResultMessages(request);
  if (results.length > 0) return textReply(`downstream said: ${results.map((result) => result.content).join(" | ")}`);
  const user = request.messages.filter((message) => message.role === "user").at(-1);
  // An expert with the default arguments schema gets the query itself as the user turn.
  const query = String(user?.content);
  return toolCallsReply({ name: `notes__${DOWNSTREAM_EXPERT}`, arguments: { query } });
}

/**
 * A second Slipsnisse as the downstream: a real authorization server with DCR, PKCE S256,
 * resource indicators, a consent page and refresh-token rotation (workers-oauth-provider), its
 * access tokens living the shortest time it allows (60 s), so every token the front instance
 * uses is due for refresh. Proves refresh with rotation, and that a downstream revoking the
 * member's grant makes the next call ask the member to connect again.
 */
describe.skipIf(chromiumSkipReason !== undefined)(`Connections to a second Slipsnisse${chromiumSkipReason ? ` (${chromiumSkipReason})` : ""}`, () => {
  let front: DevTeamServer;
  let downstream: DevTeamServer;
  let browser: Browser;
  let aliceBrowser: BrowserContext;
  let alice: OAuthSession;

  beforeAll(async () => {
    [downstream, front, browser] = await Promise.all([
      startDevTeamServer({ ACCESS_TOKEN_TTL: "60" }),
      startDevTeamServer({ ADMIN_USERS: "alice" }, { CONNECTIONS_KEY: "e2e-connections-key-second-instance-0123" }),
      sharedChromium(),
    ]);
    await loadCatalog(
      front.dev.baseUrl,
      {
        skills: {
          default: {
            servers: { notes: { url: `${downstream.dev.baseUrl}/mcp`, transport: "streamable-http", auth: { type: "oauth" } } },
            experts: [
              {
                name: EXPERT,
                description: "Asks the other team's notes as the caller.",
                internal_tools: { notes: [DOWNSTREAM_EXPERT] },
                provider: "openai-compatible",
                base_url: front.fake.baseURL,
                model: "fake-cheap",
                budget: { max_steps: 3, timeout_ms: 30_000, max_output_tokens: 256, max_tool_calls: 2, max_tool_result_bytes: 4_096 },
              },
            ],
          },
        },
      },
      { Authorization: `Bearer ${front.adminToken}` },
    );
    front.fake.reset(askThenAnswer);
    aliceBrowser = await loopbackOnlyContext(browser);
    alice = await signInAs(front.dev.baseUrl, "alice");
  }, 150_000);

  afterAll(async () => {
    await browser?.close();
    await Promise.allSettled([front?.stop(), downstream?.stop()]);
  });

  async function call(args: Record<string, unknown>): Promise<{ text: string; meta: Record<string, unknown> }> {
    const client = await connectMcpClient("v2-2025", `${front.dev.baseUrl}/mcp`, { headers: bearer(alice), timeoutMs: 40_000 });
    try {
      const result = await client.callTool(EXPERT, args);
      return { text: resultText(result), meta: result._meta ?? {} };
    } finally {
      await client.close();
    }
  }

  async function refreshedAt(): Promise<string | null> {
    const response = await fetch(`${front.dev.baseUrl}/me/api/connections`, { headers: bearer(alice) });
    const body = (await response.json()) as { connections: Array<{ refreshedAt: string | null }> };
    return body.connections[0]?.refreshedAt ?? null;
  }

  it("connects through the downstream's consent page, then refreshes (with rotation) on every call as its tokens near expiry", async () => {
    const first = await call({ query: "roadmap" });
    const connect = first.meta["slipsnisse.dev/connect"] as { url: string };
    expect(first.text).toContain("Connect notes to continue");
    const thread = String(first.meta["slipsnisse.dev/thread"]);

    const page = await aliceBrowser.newPage();
    await page.goto(connect.url);
    await page.getByRole("link", { name: "Sign in as alice" }).click();
    await page.waitForURL((url) => url.pathname.startsWith("/connect/"));
    await page.getByRole("link", { name: `Continue to ${downstream.dev.baseUrl}` }).click();
    // The downstream's own consent page: it signs alice in with its dev identity provider.
    await page.getByLabel("Sign in as").selectOption("alice");
    await page.getByRole("button", { name: "Allow", exact: true }).click();
    await page.waitForURL((url) => url.pathname === "/connect/callback" && url.origin === front.dev.baseUrl);
    await expect(page.getByRole("heading", { name: "Connected notes" }).isVisible()).resolves.toBe(true);

    const answered = await call({ query: "roadmap", thread });
    expect(answered.text).toContain("downstream said: notes say: roadmap");
    const firstRefresh = await refreshedAt();
    expect(firstRefresh).not.toBeNull();
    // The session keeps the token in memory for TOKEN_MEMO_MS (10 s); the first call after that
    // refreshes again, with the rotated refresh token. Every call in between is answered.
    await expect
      .poll(
        async () => {
          expect((await call({ query: "budget" })).text).toContain("downstream said: notes say: budget");
          return refreshedAt();
        },
        { timeout: 30_000, interval: 1_000 },
      )
      .not.toBe(firstRefresh);
  });

  it("when the downstream revokes the member's grant, the refresh fails and the next call asks to connect again", async () => {
    const revoked = await fetch(`${downstream.dev.baseUrl}/admin/api/members/alice/revoke`, {
      method: "POST",
      headers: { Authorization: `Bearer ${downstream.adminToken}` },
    });
    expect(revoked.status).toBe(200);
    let text = "";
    for (let attempt = 0; attempt < 4 && !text.includes("Connect notes to continue"); attempt++) text = (await call({ query: "again" })).text;
    expect(text).toContain("Connect notes to continue");
    const listed = await fetch(`${front.dev.baseUrl}/me/api/connections`, { headers: bearer(alice) });
    expect(((await listed.json()) as { connections: unknown[] }).connections).toEqual([]);
  });
});
