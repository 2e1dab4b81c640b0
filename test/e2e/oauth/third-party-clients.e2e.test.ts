import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, BrowserContext } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { handoffBrowserEnv, makeBrowserHandoff } from "../harness/browser-handoff";
import { chromiumSkipReason, sharedChromium, loopbackOnlyContext } from "../harness/chromium-browser";
import { ChromiumOAuthProvider } from "../harness/chromium-oauth-provider";
import { freePort } from "../harness/free-port";
import { inspectorCallTool, inspectorListToolNames } from "../harness/inspector-cli";
import {
  makeMcpRemoteHome,
  type McpRemoteBridge,
  type McpRemoteHome,
  spoilStoredAccessToken,
  startMcpRemote,
  storedTokens,
} from "../harness/mcp-remote-bridge";
import { bearer, signInAs } from "../harness/oauth-sign-in";
import { EXPERT, sharedDevTeamServer, type DevTeamServer } from "./dev-team-server";

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
describe.skipIf(chromiumSkipReason !== undefined)(
  `Third-party MCP clients through wrangler dev with OAuth${chromiumSkipReason ? ` (${chromiumSkipReason})` : ""}`,
  () => {
    let server: DevTeamServer;
    let browser: Browser;

    beforeAll(async () => {
      [server, browser] = await Promise.all([sharedDevTeamServer(), sharedChromium()]);
    });
    afterAll(async () => {
      await browser?.close();
      await server?.stop();
    });

    describe("mcp-remote (the stdio bridge of desktop clients)", () => {
      /** Runs `use` on a bridge, then ends it; a failure carries mcp-remote's stderr. */
      async function withBridge<T>(bridge: McpRemoteBridge, use: (bridge: McpRemoteBridge) => Promise<T>): Promise<T> {
        try {
          return await use(bridge);
        } catch (error) {
          throw new Error(`${String(error)}\nmcp-remote stderr:\n${bridge.stderr().slice(-3000)}`);
        } finally {
          await bridge.close();
        }
      }

      /** The person's part of mcp-remote's sign-in: the URL it handed to the browser, opened in Chromium, Allow. */
      async function allowInBrowser(bridge: McpRemoteBridge, home: McpRemoteHome): Promise<void> {
        const authorizationUrl = await bridge.waitForBrowserOpen();
        expect(authorizationUrl.origin).toBe(server.dev.baseUrl);
        expect(authorizationUrl.searchParams.get("code_challenge_method")).toBe("S256");
        const redirectUri = new URL(authorizationUrl.searchParams.get("redirect_uri") ?? "");
        expect([redirectUri.protocol, redirectUri.port]).toEqual(["http:", String(home.callbackPort)]);
        const context = await loopbackOnlyContext(browser);
        try {
          const page = await context.newPage();
          await page.goto(authorizationUrl.toString());
          await page.getByRole("button", { name: "Allow" }).click();
          // The browser ends at mcp-remote's own callback listener, which exchanges the code itself.
          await page.waitForURL((at) => at.origin === redirectUri.origin && at.pathname === redirectUri.pathname, { timeout: 20_000 });
        } finally {
          await context.close();
        }
      }

      it("signs in through the browser (Allow), lists and calls the expert over stdio; a relaunch reuses the stored sign-in, and refreshes it once the access token stops working", async () => {
        const home = await makeMcpRemoteHome();
        try {
          const url = `${server.dev.baseUrl}/mcp`;
          await withBridge(await startMcpRemote(home, url), async (bridge) => {
            await allowInBrowser(bridge, home);
            await bridge.connected;
            expect((await bridge.client.listTools()).tools.map((tool) => tool.name)).toEqual([EXPERT]);
            expect(textOf(await bridge.client.callTool({ name: EXPERT, arguments: { query: "mcp-remote over stdio" } }))).toContain(
              "notes say: mcp-remote over stdio",
            );
          });

          // A desktop client restarts its servers: the stored tokens serve, nobody is asked again.
          await withBridge(await startMcpRemote(home, url), async (bridge) => {
            await bridge.connected;
            expect(textOf(await bridge.client.callTool({ name: EXPERT, arguments: { query: "after a restart" } }))).toContain("notes say: after a restart");
          });

          // The access token stops working (revoked, expired): the 401 makes mcp-remote refresh by itself.
          const signedIn = await storedTokens(home);
          await spoilStoredAccessToken(home);
          await withBridge(await startMcpRemote(home, url), async (bridge) => {
            await bridge.connected;
            expect(textOf(await bridge.client.callTool({ name: EXPERT, arguments: { query: "after a refresh" } }))).toContain("notes say: after a refresh");
          });
          const refreshed = await storedTokens(home);
          expect(refreshed.refresh_token).toBeTruthy();
          expect(refreshed.refresh_token, "the refresh token rotates").not.toBe(signedIn.refresh_token);
          expect(await home.browser.opened(), "one browser sign-in for all three launches").toHaveLength(1);
        } finally {
          await home.remove();
        }
      });

      it("over legacy SSE (`--transport sse-only` to /sse): signs in through the browser, lists and calls the expert", async () => {
        const home = await makeMcpRemoteHome();
        try {
          await withBridge(await startMcpRemote(home, `${server.dev.baseUrl}/sse`, { args: ["--transport", "sse-only"] }), async (bridge) => {
            await allowInBrowser(bridge, home);
            await bridge.connected;
            expect((await bridge.client.listTools()).tools.map((tool) => tool.name)).toEqual([EXPERT]);
            expect(textOf(await bridge.client.callTool({ name: EXPERT, arguments: { query: "mcp-remote over sse" } }))).toContain(
              "notes say: mcp-remote over sse",
            );
          });
        } finally {
          await home.remove();
        }
      });
    });

    describe("MCP Inspector CLI", () => {
      it("lists and calls the expert over Streamable HTTP and legacy SSE with the token of a signed-in member", async () => {
        const session = await signInAs(server.dev.baseUrl, "bob", { clientName: "MCP Inspector" });
        const headers = bearer(session);
        for (const [transport, path] of [
          ["http", "/mcp"],
          ["sse", "/sse"],
        ] as const) {
          const url = `${server.dev.baseUrl}${path}`;
          expect(await inspectorListToolNames(url, { transport, headers })).toEqual([EXPERT]);
          const result = await inspectorCallTool(url, EXPERT, { query: `inspector over ${transport}` }, { transport, headers });
          expect(result.isError ?? false).toBe(false);
          expect(result.content.map((part) => part.text ?? "").join("")).toContain(`notes say: inspector over ${transport}`);
        }
      });

      it("without a token or a person at the keyboard it is refused: the server demands OAuth", async () => {
        await expect(inspectorListToolNames(`${server.dev.baseUrl}/mcp`)).rejects.toThrow(/auth_required/);
      });

      it("signs in by itself through the browser (its own callback listener), lists the expert, and a second run calls it with the stored sign-in", async () => {
        const home = await mkdtemp(join(tmpdir(), "slipsnisse-inspector-home-"));
        const context = await loopbackOnlyContext(browser);
        try {
          const handoff = await makeBrowserHandoff(home);
          const callback = new URL(`http://127.0.0.1:${await freePort()}/oauth/callback`);
          // MCP_AUTO_OPEN_ENABLED: open the browser although stdin and stderr are pipes, not a TTY.
          // The file secret store: there is no OS keychain here, and memory would not outlive the run.
          const env = { HOME: home, MCP_AUTO_OPEN_ENABLED: "true", MCP_INSPECTOR_SECRET_STORE: "file", ...handoffBrowserEnv(handoff) };
          const url = `${server.dev.baseUrl}/mcp`;
          let exited = false;
          const listing = inspectorListToolNames(url, { env, args: ["--callback-url", callback.toString()], timeoutMs: 60_000 }).finally(() => (exited = true));
          listing.catch(() => {});

          const authorizationUrl = await handoff
            .waitForOpen(0, () => (exited ? "the Inspector exited" : undefined))
            .catch(async (error: unknown) => {
              throw new Error(`${String(error)}\n${String(await listing.catch((e: unknown) => e))}`);
            });
          expect(authorizationUrl.searchParams.get("redirect_uri")).toBe(callback.toString());
          const page = await context.newPage();
          await page.goto(authorizationUrl.toString());
          await page.getByRole("button", { name: "Allow" }).click();
          await page.waitForURL((at) => at.origin === callback.origin && at.pathname === callback.pathname, { timeout: 20_000 });
          expect(await listing).toEqual([EXPERT]);

          const result = await inspectorCallTool(url, EXPERT, { query: "inspector signed in" }, { env, args: ["--stored-auth-only"] });
          expect(result.isError ?? false).toBe(false);
          expect(result.content.map((part) => part.text ?? "").join("")).toContain("notes say: inspector signed in");
          expect(await handoff.opened()).toHaveLength(1);
        } finally {
          await context.close();
          await rm(home, { recursive: true, force: true });
        }
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

      for (const [kind, path] of [
        ["Streamable HTTP", "/mcp"],
        ["legacy SSE", "/sse"],
      ] as const) {
        it(`signs in over ${kind} (401 → discovery → registration → PKCE → Allow → finishAuth), then lists and calls the expert`, async () => {
          const provider = new ChromiumOAuthProvider(context, `http://127.0.0.1:${await freePort()}/callback`);
          const url = new URL(`${server.dev.baseUrl}${path}`);
          const transportFor = () =>
            path === "/sse" ? new SSEClientTransport(url, { authProvider: provider }) : new StreamableHTTPClientTransport(url, { authProvider: provider });

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
  },
);
