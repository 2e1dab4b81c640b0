import { Client, SSEClientTransport, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadCatalog } from "../harness/catalog-admin";
import { chromiumSkipReason, sharedChromium, loopbackOnlyContext, saveScreenshot } from "../harness/chromium-browser";
import { type ChatRequest, type ScriptedReply, textReply, toolCallsReply, toolResultMessages } from "../harness/fake-openai-server";
import { connectMcpClient, resultText, type ToolCallResult } from "../harness/mcp-clients";
import { bearer, signInAs, type OAuthSession } from "../harness/oauth-sign-in";
import { startDevTeamServer, type DevTeamServer } from "../oauth/dev-team-server";
import { runCli } from "../../unit/cli/cli-test-io";
import { startMockOAuthDownstream, type MockOAuthDownstream } from "./mock-oauth-downstream";
import { startSdkOAuthDownstream, type SdkOAuthDownstream } from "./sdk-oauth-downstream";

const EXPERT = "greet_as_me";
const TEAM_EXPERT = "greet_as_team";
const MACHINE_EXPERT = "ask_as_client";
const NO_GRANT_EXPERT = "ask_without_grant";
const ACCOUNTS_EXPERT = "list_my_tools";
const CC_CLIENT_ID = "slipsnisse-e2e-client";
const CC_CLIENT_SECRET = "cc-secret-3b8e1f0a9c7d5e2b";
const CONNECT_META = "slipsnisse.dev/connect";
const THREAD_META = "slipsnisse.dev/thread";

/** The fake model: greet the name the orchestrator gave through the downstream, then report what it said. */
function greetThenAnswer(request: ChatRequest): ScriptedReply {
  const results = toolResultMessages(request);
  if (results.length > 0) return textReply(`downstream said: ${results.map((result) => result.content).join(" | ")}`);
  const user = request.messages.filter((message) => message.role === "user").at(-1);
  const name = /"query":"([^"]+)"/.exec(String(user?.content))?.[1] ?? String(user?.content);
  const offered = (request.tools ?? []).map((tool) => tool.function.name);
  if (offered.some((tool) => tool.startsWith("accounts__"))) return textReply(`offered: ${offered.join(",")}`);
  const whoami = offered.find((tool) => tool.endsWith("__whoami"));
  if (whoami !== undefined) return toolCallsReply({ name: whoami, arguments: {} });
  return toolCallsReply({ name: offered.includes("shared__greet") ? "shared__greet" : "demo__greet", arguments: { name } });
}

/**
 * Connections end to end: `wrangler dev` (OAuth on, dev identity provider with alice and bob) in
 * front of the MCP SDK's own OAuth-protected example server. A member's first call pauses with a
 * connect link instead of failing; Chromium opens it, signs in to Slipsnisse, goes through the
 * downstream's authorization (DCR, PKCE S256, `resource`) and back to /connect/callback; the
 * same call with the thread then returns the downstream's answer, reached with that member's own
 * token. Another member's browser can neither use the link nor the callback.
 */
describe.skipIf(chromiumSkipReason !== undefined)(
  `Connections through the downstream's own OAuth${chromiumSkipReason ? ` (${chromiumSkipReason})` : ""}`,
  () => {
    let team: DevTeamServer;
    let downstream: SdkOAuthDownstream;
    let machine: MockOAuthDownstream;
    let browser: Browser;
    let aliceBrowser: BrowserContext;
    let bobBrowser: BrowserContext;
    const sessions = new Map<string, OAuthSession>();

    beforeAll(async () => {
      [team, downstream, machine, browser] = await Promise.all([
        startDevTeamServer(
          { ADMIN_USERS: "alice" },
          { CONNECTIONS_KEY: "e2e-connections-key-4f1c9a7d2b6e8f0a3c5d", CC_CLIENT_ID: CC_CLIENT_ID, CC_CLIENT_SECRET: CC_CLIENT_SECRET },
        ),
        startSdkOAuthDownstream(),
        startMockOAuthDownstream(),
        sharedChromium(),
      ]);
      const clientCredentials = {
        type: "oauth",
        connection: "team",
        grant: "client_credentials",
        client_id_secret: "CC_CLIENT_ID",
        client_secret_secret: "CC_CLIENT_SECRET",
      } as const;
      const budget = { max_steps: 3, timeout_ms: 20_000, max_output_tokens: 256, max_tool_calls: 2, max_tool_result_bytes: 4_096 };
      await loadCatalog(
        team.dev.baseUrl,
        {
          skills: {
            default: {
              servers: {
                demo: { url: downstream.mcpUrl, transport: "streamable-http", auth: { type: "oauth", scopes: ["mcp:tools"] } },
                shared: { url: downstream.mcpUrl, transport: "streamable-http", auth: { type: "oauth", connection: "team" } },
                machine: { url: machine.mcpUrl, transport: "streamable-http", auth: { ...clientCredentials, scopes: ["crm.read"] } },
                nogrant: { url: machine.noGrantMcpUrl, transport: "streamable-http", auth: clientCredentials },
                // Each member signs in as their own account (a pre-registered client: the mock has no DCR);
                // each account is shown a tool of its own, which first sight pins without review.
                accounts: {
                  url: machine.accountsMcpUrl,
                  transport: "streamable-http",
                  auto_approve_new_tools: true,
                  auth: { type: "oauth", client_id_secret: "CC_CLIENT_ID", client_secret_secret: "CC_CLIENT_SECRET" },
                },
              },
              experts: [
                {
                  name: ACCOUNTS_EXPERT,
                  description: "Says which tools of the accounts server it was offered.",
                  internal_tools: { accounts: ["mailbox", "only_*"] },
                  provider: "openai-compatible",
                  base_url: team.fake.baseURL,
                  model: "fake-cheap",
                  budget,
                },
                {
                  name: MACHINE_EXPERT,
                  description: "Asks the client-credentials server who it is.",
                  internal_tools: { machine: ["whoami"] },
                  provider: "openai-compatible",
                  base_url: team.fake.baseURL,
                  model: "fake-cheap",
                  budget,
                },
                {
                  name: NO_GRANT_EXPERT,
                  description: "Asks a server whose authorization server offers no client credentials.",
                  internal_tools: { nogrant: ["whoami"] },
                  provider: "openai-compatible",
                  base_url: team.fake.baseURL,
                  model: "fake-cheap",
                  budget,
                },
                {
                  name: TEAM_EXPERT,
                  description: "Greets through the demo server as the team's account.",
                  internal_tools: { shared: ["greet"] },
                  provider: "openai-compatible",
                  base_url: team.fake.baseURL,
                  model: "fake-cheap",
                  budget: { max_steps: 3, timeout_ms: 20_000, max_output_tokens: 256, max_tool_calls: 2, max_tool_result_bytes: 4_096 },
                },
                {
                  name: EXPERT,
                  description: "Greets through the demo server as the caller.",
                  internal_tools: { demo: ["greet"] },
                  provider: "openai-compatible",
                  base_url: team.fake.baseURL,
                  model: "fake-cheap",
                  budget: { max_steps: 3, timeout_ms: 20_000, max_output_tokens: 256, max_tool_calls: 2, max_tool_result_bytes: 4_096 },
                },
              ],
            },
          },
        },
        { Authorization: `Bearer ${team.adminToken}` },
      );
      team.fake.reset(greetThenAnswer);
      [aliceBrowser, bobBrowser] = await Promise.all([loopbackOnlyContext(browser), loopbackOnlyContext(browser)]);
    }, 120_000);

    afterAll(async () => {
      await browser?.close();
      await Promise.allSettled([team?.stop(), downstream?.stop(), machine?.stop()]);
    });

    async function call(login: string, args: Record<string, unknown>, expert = EXPERT): Promise<ToolCallResult> {
      let session = sessions.get(login);
      if (!session) {
        session = await signInAs(team.dev.baseUrl, login);
        sessions.set(login, session);
      }
      const client = await connectMcpClient("v1-http", `${team.dev.baseUrl}/mcp`, { headers: bearer(session) });
      try {
        return await client.callTool(expert, args);
      } finally {
        await client.close();
      }
    }

    function connectLink(result: ToolCallResult): { url: string; thread: string } {
      const meta = result._meta?.[CONNECT_META] as { url?: string; server?: string } | undefined;
      const thread = result._meta?.[THREAD_META];
      expect(meta?.server).toBe("demo");
      expect(resultText(result)).toContain(`Connect demo to continue: ${meta?.url}`);
      expect(typeof thread).toBe("string");
      return { url: String(meta?.url), thread: String(thread) };
    }

    /** Opens the connect link, signing in to Slipsnisse first (the dashboard's sign-in, members too). */
    async function openAs(context: BrowserContext, login: string, url: string): Promise<Page> {
      const page = await context.newPage();
      await page.goto(url);
      if (new URL(page.url()).pathname === "/admin/login") {
        await page.getByRole("link", { name: `Sign in as ${login}` }).click();
        await page.waitForURL((next) => next.pathname.startsWith("/connect/"));
      }
      return page;
    }

    it("pauses alice's first call with a connect link, connects in the browser, and the same call with the thread answers through the downstream", async () => {
      const first = await call("alice", { query: "alice" });
      expect(first.isError).toBeFalsy();
      const { url, thread } = connectLink(first);
      expect(new URL(url).origin).toBe(team.dev.baseUrl);

      const page = await openAs(aliceBrowser, "alice", url);
      await expect(page.getByRole("heading", { name: "Connect demo" }).isVisible()).resolves.toBe(true);
      await expect(page.getByText("mcp:tools").isVisible()).resolves.toBe(true);
      await saveScreenshot(page, "connect-page");
      await page.getByRole("link", { name: `Continue to ${downstream.authOrigin}` }).click();
      await page.waitForURL((next) => next.pathname === "/connect/callback");
      await expect(page.getByRole("heading", { name: "Connected demo" }).isVisible()).resolves.toBe(true);

      const resumed = await call("alice", { query: "alice", thread });
      expect(resultText(resumed)).toContain("downstream said: Hello, alice!");
      expect(downstream.acceptedTokens()).toHaveLength(1);
    });

    it("bob's link does nothing in alice's browser, and alice's callback does nothing in bob's; bob then connects his own account", async () => {
      const { url: bobLink } = connectLink(await call("bob", { query: "bob" }));
      const wrong = await openAs(aliceBrowser, "alice", bobLink);
      await expect(wrong.getByRole("heading", { name: "No such connect link" }).isVisible()).resolves.toBe(true);

      // The code-bearing callback of bob's sign-in (the demo authorization server approves at
      // once, so following his authorization link without a browser yields it) lands in alice's browser.
      const { url: bobAgain, thread } = connectLink(await call("bob", { query: "bob" }));
      const bobPage = await openAs(bobBrowser, "bob", bobAgain);
      const authorize = await bobPage.getByRole("link", { name: `Continue to ${downstream.authOrigin}` }).getAttribute("href");
      const approved = await fetch(String(authorize), { redirect: "manual" });
      const stolen = approved.headers.get("location");
      expect(new URL(String(stolen)).pathname).toBe("/connect/callback");
      const attacker = await aliceBrowser.newPage();
      await attacker.goto(String(stolen));
      await expect(attacker.getByRole("heading", { name: "Not connected" }).isVisible()).resolves.toBe(true);
      // Nothing was connected for bob by alice's visit: his call still pauses.
      connectLink(await call("bob", { query: "bob", thread }));

      const own = await bobBrowser.newPage();
      await own.goto(String(stolen));
      await expect(own.getByRole("heading", { name: "Connected demo" }).isVisible()).resolves.toBe(true);
      const answered = await call("bob", { query: "bob", thread });
      expect(resultText(answered)).toContain("downstream said: Hello, bob!");
      const tokens = downstream.acceptedTokens();
      expect(tokens).toHaveLength(2);
      expect(tokens[0]).not.toBe(tokens[1]);
    });

    it("a member sees the connection (never its token) in /me/api and on the Connections page, and ending it there makes the next call ask again", async () => {
      const session = sessions.get("alice");
      const listed = await fetch(`${team.dev.baseUrl}/me/api/connections`, { headers: bearer(session ?? (await signInAs(team.dev.baseUrl, "alice"))) });
      const body = (await listed.json()) as { connections: Array<{ server: string; scope: string | null }> };
      expect(body.connections).toEqual([expect.objectContaining({ server: "demo", scope: "mcp:tools" })]);
      const admin = await fetch(`${team.dev.baseUrl}/admin/api/members/alice/connections`, { headers: { Authorization: `Bearer ${team.adminToken}` } });
      expect(((await admin.json()) as { connections: unknown[] }).connections).toHaveLength(1);
      const cli = await runCli(["connections", "alice", "--url", team.dev.baseUrl, "--token", team.adminToken]);
      expect(cli).toMatchObject({ code: 0, stdout: expect.stringContaining(`demo  ${downstream.mcpUrl}  scope: mcp:tools`) });

      const page = await aliceBrowser.newPage();
      await page.goto(`${team.dev.baseUrl}/connect`);
      await expect(page.getByRole("heading", { name: "Connections", exact: true }).isVisible()).resolves.toBe(true);
      await saveScreenshot(page, "connections-page");
      await page.getByRole("button", { name: "Disconnect demo" }).click();
      await page.waitForURL((url) => url.searchParams.has("ended"));
      await expect(page.getByRole("status").textContent()).resolves.toContain("Disconnected");
      // Her session held the token in memory (TOKEN_MEMO_MS); the Disconnect told it to forget it before answering.
      expect(resultText(await call("alice", { query: "alice" }))).toContain("Connect demo to continue");
    });

    // Legacy SSE keeps one server for the connection, which saw the client's capabilities; a
    // stateless 2025 call learns them from the Mcp-Session-Id minted at `initialize`, and its
    // request and reply travel on the call's stream and through the member's session.
    const urlElicitationTransports = {
      "legacy SSE": (base: string, headers: Record<string, string>) => new SSEClientTransport(new URL(`${base}/sse`), { requestInit: { headers } }),
      "stateless Streamable HTTP (2025-11-25)": (base: string, headers: Record<string, string>) =>
        new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers } }),
    };
    it.each(Object.keys(urlElicitationTransports) as Array<keyof typeof urlElicitationTransports>)(
      "a client that declared URL-mode elicitation on %s is shown the connect page mid-call, and the same call returns the answer",
      async (transportName) => {
        const session = sessions.get("bob") ?? (await signInAs(team.dev.baseUrl, "bob"));
        const removed = await runCli(["connections", "remove", "bob", "--url", team.dev.baseUrl, "--token", team.adminToken]);
        expect(removed).toMatchObject({ code: 0, stdout: expect.stringContaining("Removed 1 connection(s) of bob") });
        // A connection that keeps one server for its life is one where the client's declared
        // capabilities are known (stateless Streamable HTTP forgets them after initialize).
        const client = new Client({ name: "url-elicitation-client", version: "0.0.0" }, { capabilities: { elicitation: { url: {} } } });
        const shown: Array<{ url: string; elicitationId: string }> = [];
        const completed: string[] = [];
        const browsing: Promise<void>[] = [];
        client.setRequestHandler("elicitation/create", async (request) => {
          const params = request.params as { mode?: string; url?: string; elicitationId?: string };
          if (params.mode !== "url" || !params.url || !params.elicitationId) return { action: "decline" };
          shown.push({ url: params.url, elicitationId: params.elicitationId });
          // The "user" opens the page while the call waits: accept first, as a client does.
          browsing.push(
            (async () => {
              const page = await openAs(bobBrowser, "bob", String(params.url));
              await page.getByRole("link", { name: `Continue to ${downstream.authOrigin}` }).click();
              await page.waitForURL((next) => next.pathname === "/connect/callback");
            })(),
          );
          return { action: "accept" };
        });
        client.setNotificationHandler("notifications/elicitation/complete", (notification) => {
          completed.push(String((notification.params as { elicitationId?: string }).elicitationId));
        });
        await client.connect(urlElicitationTransports[transportName](team.dev.baseUrl, bearer(session)));
        try {
          const text = await callBob(client, 60_000);
          await Promise.all(browsing);
          expect(shown).toHaveLength(1);
          expect(shown[0]?.url).toMatch(new RegExp(`^${team.dev.baseUrl}/connect/`));
          expect(text).toContain("downstream said: Hello, bob!");
          expect(completed).toEqual([shown[0]?.elicitationId]);
        } finally {
          await client.close();
        }
      },
    );

    it("a team connection: a member is told an admin must connect it and cannot; the admin connects once and the member's call goes through", async () => {
      const first = await call("bob", { query: "team" }, TEAM_EXPERT);
      const meta = first._meta?.[CONNECT_META] as { url: string; connection: string };
      expect(meta.connection).toBe("team");
      expect(resultText(first)).toContain(`An admin must connect shared for the team to continue: ${meta.url}`);
      const refused = await openAs(bobBrowser, "bob", meta.url);
      await expect(refused.getByRole("heading", { name: "Admins only" }).isVisible()).resolves.toBe(true);

      const page = await openAs(aliceBrowser, "alice", meta.url);
      await expect(page.getByText("every member's expert calls will act as the account you connect").isVisible()).resolves.toBe(true);
      await page.getByRole("link", { name: `Continue to ${downstream.authOrigin}` }).click();
      await page.waitForURL((next) => next.pathname === "/connect/callback");
      await expect(page.getByRole("heading", { name: "Connected shared" }).isVisible()).resolves.toBe(true);
      expect(resultText(await call("bob", { query: "team", thread: String(first._meta?.[THREAD_META]) }, TEAM_EXPERT))).toContain(
        "downstream said: Hello, team!",
      );
      const overview = await fetch(`${team.dev.baseUrl}/admin/api/connections`, { headers: { Authorization: `Bearer ${team.adminToken}` } });
      const seen = (await overview.json()) as { members: Array<{ login: string; connections: Array<{ server: string }> }>; team: Array<{ server: string }> };
      expect(seen.team.map((row) => row.server)).toEqual(["shared"]);
      expect(seen.members.find((row) => row.login === "bob")?.connections.map((row) => row.server)).toEqual(["demo"]);
      expect(JSON.stringify(seen)).not.toMatch(/access_token|refresh_token/);
      const listed = await fetch(`${team.dev.baseUrl}/admin/api/connections/team`, { headers: { Authorization: `Bearer ${team.adminToken}` } });
      expect(((await listed.json()) as { connections: Array<{ server: string; connectedBy: string }> }).connections).toEqual([
        expect.objectContaining({ server: "shared", connectedBy: "alice" }),
      ]);
    });

    it("the dashboard's Connections page: the team's account and who connected it, members per server, disconnect and connect again; no token in the page; a member is refused", async () => {
      const page = await aliceBrowser.newPage();
      await page.goto(`${team.dev.baseUrl}/admin/connections`);
      await expect(page.getByRole("heading", { name: "Connections", exact: true }).isVisible()).resolves.toBe(true);
      const teamSection = page.getByRole("region", { name: "Team connections" });
      await expect(teamSection.getByText("every member acts as the account alice signed in with").isVisible()).resolves.toBe(true);
      const members = page.getByRole("region", { name: "Per-member connections" });
      // alice's connection to demo ended earlier on her own page; bob's stands.
      await expect(members.getByRole("row", { name: /demo/ }).textContent()).resolves.toContain("1 member connected");
      await saveScreenshot(page, "dashboard-connections");
      const markup = await page.content();
      for (const token of downstream.acceptedTokens()) expect(markup.includes(token), "token in the page").toBe(false);
      expect(markup).not.toMatch(/access_token|refresh_token/);

      const refused = await bobBrowser.newPage();
      await refused.goto(`${team.dev.baseUrl}/admin/connections`);
      await expect(refused.getByRole("heading", { name: "Admins only" }).isVisible()).resolves.toBe(true);
      expect(await refused.content()).not.toContain(downstream.mcpUrl);
      await saveScreenshot(refused, "dashboard-connections-member");

      await page.getByRole("button", { name: "Disconnect shared for the team" }).click();
      await page.waitForURL((url) => url.searchParams.has("ended"));
      await expect(page.getByRole("status").textContent()).resolves.toContain("Disconnected the team's account");
      await expect(teamSection.getByText("Not connected").isVisible()).resolves.toBe(true);
      const listed = await fetch(`${team.dev.baseUrl}/admin/api/connections/team`, { headers: { Authorization: `Bearer ${team.adminToken}` } });
      expect(((await listed.json()) as { connections: unknown[] }).connections).toEqual([]);

      // Connect again from the dashboard: the same connect page a run's link opens, then the server's own sign-in.
      await page.getByRole("button", { name: "Connect shared for the team" }).click();
      await page.waitForURL((url) => url.pathname.startsWith("/connect/team/"));
      await expect(page.getByText("every member's expert calls will act as the account you connect").isVisible()).resolves.toBe(true);
      await page.getByRole("link", { name: `Continue to ${downstream.authOrigin}` }).click();
      await page.waitForURL((next) => next.pathname === "/connect/callback");
      await expect(page.getByRole("heading", { name: "Connected shared" }).isVisible()).resolves.toBe(true);
      await page.goto(`${team.dev.baseUrl}/admin/connections`);
      await expect(teamSection.getByText("every member acts as the account alice signed in with").isVisible()).resolves.toBe(true);
      await saveScreenshot(page, "dashboard-connections-reconnected");
      expect(resultText(await call("bob", { query: "team again" }, TEAM_EXPERT))).toContain("downstream said: Hello, team again!");
    });

    it("health: the per-member server is reachable and needs each member's sign-in; the team server is probed with the team's token", async () => {
      const response = await fetch(`${team.dev.baseUrl}/admin/api/skills/default/health`, { headers: { Authorization: `Bearer ${team.adminToken}` } });
      expect(response.status).toBe(200);
      const text = await response.text();
      const health = JSON.parse(text) as { ok: boolean; servers: Array<{ server: string; ok: boolean; signIn?: string; toolCount?: number; note?: string }> };
      const byServer = Object.fromEntries(health.servers.map((server) => [server.server, server]));
      expect(byServer.demo).toMatchObject({ ok: true, signIn: "needs-each-member", note: expect.stringContaining("reachable, and asks for a sign-in") });
      expect(byServer.shared).toMatchObject({ ok: true, signIn: "team-connected", toolCount: expect.any(Number) });
      // (The skill's client-credentials servers are checked in their own test.)
      for (const token of downstream.acceptedTokens()) expect(text.includes(token)).toBe(false);

      const page = await aliceBrowser.newPage();
      await page.goto(`${team.dev.baseUrl}/admin/servers`);
      await page.getByRole("button", { name: "Probe default's servers now" }).click();
      await page.waitForLoadState();
      await expect(page.getByRole("row", { name: /demo/ }).textContent()).resolves.toContain("needs each member's sign-in");
      await expect(page.getByRole("row", { name: /shared/ }).textContent()).resolves.toContain("as the team's account");
      await saveScreenshot(page, "dashboard-servers-auth-health");
    });

    it("client credentials: a member's call goes through at once as the OAuth client, no one signs in; a server whose authorization server offers no such grant is an error, and gets no secret", async () => {
      const first = await call("bob", { query: "who" }, MACHINE_EXPERT);
      expect(first._meta?.[CONNECT_META]).toBeUndefined();
      expect(resultText(first)).toContain(`downstream said: client ${CC_CLIENT_ID}`);
      // client_secret_basic with the Worker secrets' values, once: the next call reuses the token.
      expect(machine.tokenRequests().offered).toEqual([`${CC_CLIENT_ID}:${CC_CLIENT_SECRET}`]);
      expect(resultText(await call("alice", { query: "again" }, MACHINE_EXPERT))).toContain(`downstream said: client ${CC_CLIENT_ID}`);
      expect(machine.tokenRequests().offered).toHaveLength(1);
      expect(machine.acceptedTokens()).toHaveLength(1);

      const refused = await call("bob", { query: "who" }, NO_GRANT_EXPERT);
      expect(refused.isError).toBe(true);
      expect(resultText(refused)).toContain("does not list `client_credentials` in grant_types_supported, so no client secret was sent");
      expect(machine.tokenRequests().notOffered).toEqual([]);

      const health = (await (
        await fetch(`${team.dev.baseUrl}/admin/api/skills/default/health`, { headers: { Authorization: `Bearer ${team.adminToken}` } })
      ).json()) as { servers: Array<{ server: string; ok: boolean; signIn?: string; error?: string }> };
      expect(health.servers.find((server) => server.server === "machine")).toMatchObject({ ok: true, signIn: "team-connected" });
      expect(health.servers.find((server) => server.server === "nogrant")).toMatchObject({
        ok: false,
        signIn: "team-not-connected",
        error: expect.stringContaining("its token could not be fetched with the client credentials: its authorization server's metadata does not list"),
      });

      const page = await aliceBrowser.newPage();
      await page.goto(`${team.dev.baseUrl}/admin/connections`);
      await expect(page.getByRole("row", { name: /machine/ }).textContent()).resolves.toContain("every member acts as the OAuth client itself");
      await expect(page.getByRole("row", { name: /nogrant/ }).textContent()).resolves.toContain("No sign-in needed");
      await saveScreenshot(page, "dashboard-connections-client-credentials");
      const markup = await page.content();
      for (const secret of [CC_CLIENT_SECRET, ...machine.acceptedTokens()]) expect(markup.includes(secret)).toBe(false);
    });

    it("tool lists per account: alice and bob, signed in as different accounts of one server, are each offered only their own account's tools", async () => {
      const connectAccounts = async (login: string, context: BrowserContext): Promise<string> => {
        const paused = await call(login, { query: "tools" }, ACCOUNTS_EXPERT);
        const meta = paused._meta?.[CONNECT_META] as { url: string; server: string };
        expect(meta.server).toBe("accounts");
        const page = await openAs(context, login, meta.url);
        await page.getByRole("link", { name: /^Continue to / }).click();
        await page.waitForURL((next) => next.pathname === "/connect/callback");
        await expect(page.getByRole("heading", { name: "Connected accounts" }).isVisible()).resolves.toBe(true);
        return resultText(await call(login, { query: "tools", thread: String(paused._meta?.[THREAD_META]) }, ACCOUNTS_EXPERT));
      };
      // alice's session lists the server first (and caches it); bob's session of the same skill comes after.
      const alice = await connectAccounts("alice", aliceBrowser);
      expect(alice).toContain("accounts__only_acct1");
      const bob = await connectAccounts("bob", bobBrowser);
      expect(bob).toContain("accounts__only_acct2");
      expect(bob).not.toContain("acct1");
      expect(bob).toContain("accounts__mailbox");
      // A fresh call of each is served from their own cached listing.
      expect(resultText(await call("alice", { query: "tools again" }, ACCOUNTS_EXPERT))).not.toContain("acct2");
    });

    it("a 2026-07-28 client that declared URL-mode elicitation gets an input request with the connect page, and its retry returns the answer", async () => {
      const session = sessions.get("bob") ?? (await signInAs(team.dev.baseUrl, "bob"));
      const removed = await runCli(["connections", "remove", "bob", "--url", team.dev.baseUrl, "--token", team.adminToken]);
      expect(removed.code).toBe(0);
      const client = new Client(
        { name: "url-elicitation-2026", version: "0.0.0" },
        { versionNegotiation: { mode: { pin: "2026-07-28" } }, capabilities: { elicitation: { url: {} } } },
      );
      const shown: string[] = [];
      const browsing: Promise<void>[] = [];
      client.setRequestHandler("elicitation/create", async (request) => {
        const params = request.params as { mode?: string; url?: string };
        if (params.mode !== "url" || !params.url) return { action: "decline" };
        shown.push(params.url);
        browsing.push(
          (async () => {
            const page = await openAs(bobBrowser, "bob", String(params.url));
            await page.getByRole("link", { name: `Continue to ${downstream.authOrigin}` }).click();
            await page.waitForURL((next) => next.pathname === "/connect/callback");
          })(),
        );
        return { action: "accept" };
      });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${team.dev.baseUrl}/mcp`), { requestInit: { headers: bearer(session) } }));
      try {
        const text = await callBob(client, 90_000);
        await Promise.all(browsing);
        expect(shown).toHaveLength(1);
        expect(shown[0]).toMatch(new RegExp(`^${team.dev.baseUrl}/connect/`));
        expect(text).toContain("downstream said: Hello, bob!");
      } finally {
        await client.close();
      }
    });

    it("no downstream token appears in Slipsnisse's logs, the model's requests or the run records", async () => {
      const tokens = [...downstream.acceptedTokens(), ...machine.acceptedTokens(), CC_CLIENT_SECRET];
      expect(tokens.length).toBeGreaterThan(2);
      const runs = await fetch(`${team.dev.baseUrl}/admin/api/runs?limit=50`, { headers: { Authorization: `Bearer ${team.adminToken}` } });
      const records = await runs.text();
      expect(runs.status).toBe(200);
      const haystacks = { logs: team.dev.logs(), model: JSON.stringify(team.fake.requests), runs: records };
      for (const token of tokens) for (const [where, text] of Object.entries(haystacks)) expect(text.includes(token), `token in ${where}`).toBe(false);
    });
  },
);

/**
 * One call of bob's expert, right after an admin removed his connections: the removal told his
 * session to forget the token it held, so this very call asks him to connect. Its content, as JSON text.
 */
async function callBob(client: Client, timeoutMs: number): Promise<string> {
  const result = await client.callTool({ name: EXPERT, arguments: { query: "bob" } }, { timeout: timeoutMs });
  return JSON.stringify(result.content);
}
