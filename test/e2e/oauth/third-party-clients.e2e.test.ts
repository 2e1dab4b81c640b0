import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import type { Browser, BrowserContext } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import { chromiumSkipReason, launchChromium, loopbackOnlyContext } from "../harness/chromium-browser";
import { ChromiumOAuthProvider } from "../harness/chromium-oauth-provider";
import { freePort } from "../harness/free-port";
import { inspectorCallTool, inspectorListToolNames } from "../harness/inspector-cli";
import { browserOpens, makeMcpRemoteHome, startMcpRemote, type McpRemoteHome } from "../harness/mcp-remote-bridge";
import { bearer, signInAs } from "../harness/oauth-sign-in";
import { EXPERT, startDevTeamServer, type DevTeamServer } from "./dev-team-server";

/** The text parts of an SDK v1 tools/call result. */
function textOf(result: unknown): string {
  const parsed = CallToolResultSchema.parse(result);
  expect(parsed.isError ?? false, JSON.stringify(parsed.content)).toBe(false);
  return parsed.content.map((part) => (part.type === "text" ? part.text : "")).join("");
}

/**
 * Third-party MCP clients, unmodified, against `wrangler dev` with OAuth on (dev identity
 * provider): each runs its own sign-in or sends a token it was given, and lists and calls the
 * expert. The person's part (the consent page) is clicked in Chromium.
 */
describe.skipIf(chromiumSkipReason !== undefined)(`Third-party MCP clients through wrangler dev with OAuth${chromiumSkipReason ? ` (${chromiumSkipReason})` : ""}`, () => {
  let server: DevTeamServer;
  let browser: Browser;

  beforeAll(async () => {
    [server, browser] = await Promise.all([startDevTeamServer(), launchChromium()]);
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  describe("mcp-remote (the stdio bridge of desktop clients)", () => {
    let home: McpRemoteHome;
    beforeAll(async () => {
      home = await makeMcpRemoteHome();
    });
    afterAll(async () => {
      await home?.remove();
    });

    it("signs in through the browser (Allow), then lists and calls the expert over stdio", async () => {
      const bridge = await startMcpRemote(home, `${server.dev.baseUrl}/mcp`);
      let context: BrowserContext | undefined;
      try {
        const authorizationUrl = await bridge.waitForBrowserOpen();
        expect(authorizationUrl.origin).toBe(server.dev.baseUrl);
        expect(authorizationUrl.searchParams.get("code_challenge_method")).toBe("S256");
        const redirectUri = new URL(authorizationUrl.searchParams.get("redirect_uri") ?? "");
        expect([redirectUri.protocol, redirectUri.port]).toEqual(["http:", String(home.callbackPort)]);

        context = await loopbackOnlyContext(browser);
        const page = await context.newPage();
        await page.goto(authorizationUrl.toString());
        await page.getByRole("button", { name: "Allow" }).click();
        // The browser ends at mcp-remote's own callback listener, which exchanges the code itself.
        await page.waitForURL((url) => url.origin === redirectUri.origin && url.pathname === redirectUri.pathname, { timeout: 20_000 });
        await bridge.connected;

        expect((await bridge.client.listTools()).tools.map((tool) => tool.name)).toEqual([EXPERT]);
        const result = await bridge.client.callTool({ name: EXPERT, arguments: { query: "mcp-remote over stdio" } });
        expect(textOf(result)).toContain("notes say: mcp-remote over stdio");
      } catch (error) {
        throw new Error(`${String(error)}\nmcp-remote stderr:\n${bridge.stderr().slice(-3000)}`);
      } finally {
        await context?.close();
        await bridge.close();
      }
    });

    it("a second launch reuses the stored sign-in: no browser, and the expert answers", async () => {
      const opened = (await browserOpens(home)).length;
      expect(opened, "the first test signed in through the browser").toBe(1);
      const bridge = await startMcpRemote(home, `${server.dev.baseUrl}/mcp`);
      try {
        await bridge.connected;
        const result = await bridge.client.callTool({ name: EXPERT, arguments: { query: "after a restart" } });
        expect(textOf(result)).toContain("notes say: after a restart");
        expect(await browserOpens(home)).toHaveLength(opened);
      } catch (error) {
        throw new Error(`${String(error)}\nmcp-remote stderr:\n${bridge.stderr().slice(-3000)}`);
      } finally {
        await bridge.close();
      }
    });
  });

  describe("MCP Inspector CLI with a bearer token", () => {
    it("lists and calls the expert over Streamable HTTP and legacy SSE with the token of a signed-in member", async () => {
      const session = await signInAs(server.dev.baseUrl, "bob", { clientName: "MCP Inspector" });
      const headers = bearer(session);
      for (const [transport, path] of [["http", "/mcp"], ["sse", "/sse"]] as const) {
        const url = `${server.dev.baseUrl}${path}`;
        expect(await inspectorListToolNames(url, { transport, headers })).toEqual([EXPERT]);
        const result = await inspectorCallTool(url, EXPERT, { query: `inspector over ${transport}` }, { transport, headers });
        expect(result.isError ?? false).toBe(false);
        expect(result.content.map((part) => part.text ?? "").join("")).toContain(`notes say: inspector over ${transport}`);
      }
    });

    it("without the token the Inspector gets nothing", async () => {
      await expect(inspectorListToolNames(`${server.dev.baseUrl}/mcp`, { timeoutMs: 20_000 })).rejects.toThrow(/exited/);
    });
  });

  describe("MCP SDK v1 client's own OAuth (authProvider), consent in Chromium", () => {
    let context: BrowserContext;
    beforeAll(async () => {
      context = await loopbackOnlyContext(browser);
    });
    afterAll(async () => {
      await context?.close();
    });

    for (const [kind, path] of [["Streamable HTTP", "/mcp"], ["legacy SSE", "/sse"]] as const) {
      it(`signs in over ${kind} (401 → discovery → registration → PKCE → Allow → finishAuth), then lists and calls the expert`, async () => {
        const provider = new ChromiumOAuthProvider(context, `http://127.0.0.1:${await freePort()}/callback`);
        const url = new URL(`${server.dev.baseUrl}${path}`);
        const transportFor = () => (path === "/sse" ? new SSEClientTransport(url, { authProvider: provider }) : new StreamableHTTPClientTransport(url, { authProvider: provider }));

        const first = transportFor();
        await expect(new Client({ name: "sdk-v1-oauth", version: "0" }).connect(first)).rejects.toBeInstanceOf(UnauthorizedError);
        expect(provider.authorizationUrls).toHaveLength(1);
        await first.finishAuth(provider.authorizationCode());
        expect(provider.savedTokens).toHaveLength(1);

        const client = new Client({ name: "sdk-v1-oauth", version: "0" });
        await client.connect(transportFor());
        try {
          expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual([EXPERT]);
          expect(textOf(await client.callTool({ name: EXPERT, arguments: { query: `sdk v1 over ${kind}` } }))).toContain(`notes say: sdk v1 over ${kind}`);
        } finally {
          await client.close();
        }
      });
    }

    it("refreshes by itself when the access token stops working: the refresh token rotates, the call succeeds, no second consent", async () => {
      const provider = new ChromiumOAuthProvider(context, `http://127.0.0.1:${await freePort()}/callback`);
      const url = new URL(`${server.dev.baseUrl}/mcp`);
      const first = new StreamableHTTPClientTransport(url, { authProvider: provider });
      await expect(new Client({ name: "sdk-v1-oauth", version: "0" }).connect(first)).rejects.toBeInstanceOf(UnauthorizedError);
      await first.finishAuth(provider.authorizationCode());

      const client = new Client({ name: "sdk-v1-oauth", version: "0" });
      await client.connect(new StreamableHTTPClientTransport(url, { authProvider: provider }));
      try {
        const signedIn = provider.savedTokens[0];
        expect(signedIn?.refresh_token).toBeTruthy();
        provider.spoilAccessToken();

        expect(textOf(await client.callTool({ name: EXPERT, arguments: { query: "after a refresh" } }))).toContain("notes say: after a refresh");
        expect(provider.savedTokens).toHaveLength(2);
        const refreshed = provider.savedTokens[1];
        expect(refreshed?.access_token).not.toBe(signedIn?.access_token);
        expect(refreshed?.refresh_token).toBeTruthy();
        expect(refreshed?.refresh_token).not.toBe(signedIn?.refresh_token);
        expect(provider.authorizationUrls).toHaveLength(1);
      } finally {
        await client.close();
      }
    });
  });
});
