import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadCatalog } from "../harness/catalog-admin";
import { chromiumSkipReason, sharedChromium, loopbackOnlyContext, saveScreenshot } from "../harness/chromium-browser";
import {
  type ChatRequest,
  type FakeOpenAIServer,
  type ScriptedReply,
  startFakeOpenAI,
  textReply,
  toolCallsReply,
  toolResultMessages,
} from "../harness/fake-openai-server";
import { connectMcpClient, resultText, type ToolCallResult } from "../harness/mcp-clients";
import { bearer, signInAs, type OAuthSession } from "../harness/oauth-sign-in";
import { startWranglerDev, type WranglerDev } from "../harness/wrangler-dev";
import { projectWithSecrets, type ProjectWithSecrets } from "../oauth/project-with-secrets";
import { startSdkOAuthDownstream, type SdkOAuthDownstream } from "./sdk-oauth-downstream";

const CONNECT_META = "slipsnisse.dev/connect";
const SECRETS = { CONNECTIONS_KEY: "e2e-stale-cookie-key-7c2e9a4f1b3d5e60" };
const BUDGET = { max_steps: 3, timeout_ms: 20_000, max_output_tokens: 256, max_tool_calls: 2, max_tool_result_bytes: 4_096 };

/** The fake model: greet through whichever server it was offered, then report what it said. */
function greet(request: ChatRequest): ScriptedReply {
  const results = toolResultMessages(request);
  if (results.length > 0) return textReply(`downstream said: ${results.map((result) => result.content).join(" | ")}`);
  const tool = (request.tools ?? []).map((entry) => entry.function.name).find((name) => name.endsWith("__greet")) ?? "none";
  return toolCallsReply({ name: tool, arguments: { name: "team" } });
}

/**
 * Issue 34, as the outside attack did it: a copy of an admin's dashboard cookie, kept after that
 * admin signed out or was revoked. In Chromium against `wrangler dev`
 * (OAuth on, the dev identity provider, the MCP SDK's own OAuth example servers downstream), the
 * copy must not open a team connect page, finish a team callback with the attacker's downstream
 * account, or disconnect the team's account from a Connections page opened while it was good.
 *
 * An admin taken off ADMIN_USERS is refused by the same check (the role is read from today's
 * ADMIN_USERS, not the cookie): test/dashboard/connect-sessions.test.ts proves it on every connect
 * route, since changing a running `wrangler dev`'s vars means a reload this file would wait on.
 * Its own `wrangler dev`: team connections need CONNECTIONS_KEY, which the shared servers lack.
 */
describe.skipIf(chromiumSkipReason !== undefined)(
  `A stale dashboard cookie on the connect pages${chromiumSkipReason ? ` (${chromiumSkipReason})` : ""}`,
  () => {
    let project: ProjectWithSecrets;
    let dev: WranglerDev;
    let fake: FakeOpenAIServer;
    let connected: SdkOAuthDownstream;
    let pending: SdkOAuthDownstream;
    let browser: Browser;
    let alice: BrowserContext;
    let bobSession: OAuthSession;

    async function writeAdmins(admins: string): Promise<void> {
      const lines = Object.entries({ ADMIN_TOKEN: project.adminToken, ...SECRETS, ADMIN_USERS: admins }).map(([name, value]) => `${name}=${value}`);
      await writeFile(join(project.dir, ".dev.vars"), `${lines.join("\n")}\n`, { mode: 0o600 });
    }

    beforeAll(async () => {
      [project, fake, connected, pending, browser] = await Promise.all([
        projectWithSecrets(),
        startFakeOpenAI({ script: greet }),
        startSdkOAuthDownstream(),
        startSdkOAuthDownstream(),
        sharedChromium(),
      ]);
      await writeAdmins("alice,carol");
      dev = await startWranglerDev({
        projectDir: project.dir,
        vars: { ENVIRONMENT: "local", AUTH: "oauth", IDP: "dev", DEV_USER: "alice", DEV_USERS: "alice,bob,carol" },
      });
      const expert = (name: string, server: string) => ({
        name,
        description: `Greets through ${server} as the team's account.`,
        internal_tools: { [server]: ["greet"] },
        provider: "openai-compatible" as const,
        base_url: fake.baseURL,
        model: "fake-cheap",
        budget: BUDGET,
      });
      await loadCatalog(
        dev.baseUrl,
        {
          skills: {
            default: {
              servers: {
                connected: { url: connected.mcpUrl, transport: "streamable-http", auth: { type: "oauth", connection: "team" } },
                pending: { url: pending.mcpUrl, transport: "streamable-http", auth: { type: "oauth", connection: "team" } },
              },
              experts: [expert("greet_connected", "connected"), expert("greet_pending", "pending")],
            },
          },
        },
        { Authorization: `Bearer ${project.adminToken}` },
      );
      alice = await loopbackOnlyContext(browser);
      bobSession = await signInAs(dev.baseUrl, "bob");
      // The team's account on `connected`, connected by alice as a run's link asks.
      const page = await openAs(alice, "alice", await teamLink("greet_connected"));
      await page.getByRole("link", { name: `Continue to ${connected.authOrigin}` }).click();
      await page.waitForURL((next) => next.pathname === "/connect/callback");
      await expect(page.getByRole("heading", { name: "Connected connected" }).isVisible()).resolves.toBe(true);
      await page.close();
    }, 180_000);

    afterAll(async () => {
      await browser?.close();
      await dev?.stop();
      await Promise.allSettled([fake?.close(), connected?.stop(), pending?.stop(), project?.remove()]);
    });

    async function call(expert: string): Promise<ToolCallResult> {
      const client = await connectMcpClient("v1-http", `${dev.baseUrl}/mcp`, { headers: bearer(bobSession) });
      try {
        return await client.callTool(expert, { query: "team" });
      } finally {
        await client.close();
      }
    }

    /** bob's call pauses: an admin must connect the server for the team; the link of that team flow. */
    async function teamLink(expert: string): Promise<string> {
      const result = await call(expert);
      const meta = result._meta?.[CONNECT_META] as { url?: string; connection?: string } | undefined;
      expect(meta?.connection, resultText(result)).toBe("team");
      return String(meta?.url);
    }

    /** Opens a page of ours, signing in to the dashboard as `login` when it asks. */
    async function openAs(context: BrowserContext, login: string, url: string): Promise<Page> {
      const page = await context.newPage();
      await page.goto(url);
      if (new URL(page.url()).pathname === "/admin/login") {
        await page.getByRole("link", { name: `Sign in as ${login}` }).click();
        await page.waitForURL((next) => next.pathname !== "/admin/login" && !next.pathname.startsWith("/admin/login/"));
      }
      return page;
    }

    async function teamConnections(): Promise<string[]> {
      const listed = await fetch(`${dev.baseUrl}/admin/api/connections/team`, { headers: { Authorization: `Bearer ${project.adminToken}` } });
      return ((await listed.json()) as { connections: Array<{ server: string }> }).connections.map((row) => row.server).sort();
    }

    const endings = [
      {
        name: "signed out",
        async end(carol: BrowserContext) {
          const page = await carol.newPage();
          await page.goto(`${dev.baseUrl}/admin`);
          await page.getByRole("button", { name: "Sign out" }).click();
          await page.waitForURL((next) => next.pathname === "/admin/login");
          await page.close();
        },
      },
      {
        name: "revoked by an admin",
        async end() {
          const revoke = await fetch(`${dev.baseUrl}/admin/api/members/dev-carol/revoke`, {
            method: "POST",
            headers: { Authorization: `Bearer ${project.adminToken}` },
          });
          expect(revoke.status).toBe(200);
        },
      },
    ];

    for (const ending of endings) {
      it(`an admin's cookie ${ending.name}: its copy opens no team connect page, finishes no team callback, disconnects nothing`, async () => {
        const carol = await loopbackOnlyContext(browser);
        const attacker = await loopbackOnlyContext(browser);
        try {
          // carol signs in; the attacker holds a copy of her cookie and her Connections page, opened while it was good.
          await (await openAs(carol, "carol", `${dev.baseUrl}/admin`)).close();
          await attacker.addCookies(await carol.cookies());
          const stale = await attacker.newPage();
          await stale.goto(`${dev.baseUrl}/connect`);
          await expect(stale.getByRole("heading", { name: "Team connections" }).isVisible()).resolves.toBe(true);
          const link = await teamLink("greet_pending");

          await ending.end(carol);

          const page = await attacker.newPage();
          await page.goto(link);
          expect(new URL(page.url()).pathname).toBe("/admin/login");
          await expect(page.getByRole("link", { name: /^Continue to / }).count()).resolves.toBe(0);
          await saveScreenshot(page, "stale-cookie-connect-page-ended");

          // The downstream approves at once, so the attacker's sign-in there yields a code-bearing callback; the stale copy cannot redeem it.
          const live = await openAs(alice, "alice", link);
          const authorize = await live.getByRole("link", { name: `Continue to ${pending.authOrigin}` }).getAttribute("href");
          await live.close();
          const approved = await fetch(String(authorize), { redirect: "manual" });
          const callback = String(approved.headers.get("location"));
          expect(new URL(callback).pathname).toBe("/connect/callback");
          await page.goto(callback);
          expect(new URL(page.url()).pathname).toBe("/admin/login");
          expect(await teamConnections()).toEqual(["connected"]);
          expect(resultText(await call("greet_pending"))).toContain("An admin must connect pending for the team");

          // The Disconnect button of the page opened while the cookie was good.
          await stale.getByRole("button", { name: "Disconnect connected" }).click();
          await stale.waitForLoadState();
          await expect(stale.getByRole("heading", { name: "Sign in first" }).isVisible()).resolves.toBe(true);
          expect(await teamConnections()).toEqual(["connected"]);
          expect(resultText(await call("greet_connected"))).toContain("downstream said:");
        } finally {
          await Promise.allSettled([carol.close(), attacker.close()]);
        }
      }, 120_000);
    }
  },
);
