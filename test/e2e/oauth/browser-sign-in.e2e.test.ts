import { OAuth2Server } from "oauth2-mock-server";
import type { Browser, BrowserContext, Locator, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { chromiumSkipReason, sharedChromium, loopbackOnlyContext, saveScreenshot, watchClientRedirect } from "../harness/chromium-browser";
import { startLoopbackCallback } from "../harness/loopback-callback";
import { connectMcpClient, type McpClientKind } from "../harness/mcp-clients";
import { beginSignIn, bearer, type OAuthSession, type PendingSignIn } from "../harness/oauth-sign-in";
import { EXPERT, startDevTeamServer, type DevTeamServer } from "./dev-team-server";

const CLAUDE_AI_CALLBACK = "https://claude.ai/api/mcp/auth_callback";
const CURSOR_CALLBACK = "cursor://anysphere.cursor-mcp/oauth/callback";
const TENANT = "acme";

const isClaudeAi = (url: URL) => url.origin === "https://claude.ai";

/** Waits (bounded) until the element is shown; throws naming it otherwise. */
function visible(locator: Locator): Promise<void> {
  return locator.waitFor({ state: "visible", timeout: 5_000 });
}

/**
 * Sign-in in a real browser: the consent page, the identity provider's redirects and the
 * client's callback, in Chromium against `wrangler dev`. Chromium enforces what a fetch-driven
 * test never sees (CSP form-action on the redirects after the consent POST, cookie rules), so
 * each way a client receives its code is driven here: an https callback (claude.ai), a loopback
 * listener (Claude Code), a native app's own scheme (Cursor), plus Deny and an unregistered
 * redirect. Once with the dev identity provider, once with OpenID Connect (oauth2-mock-server).
 */
describe.skipIf(chromiumSkipReason !== undefined)(`Sign-in in Chromium through wrangler dev${chromiumSkipReason ? ` (${chromiumSkipReason})` : ""}`, () => {
  let browser: Browser;
  let context: BrowserContext;

  beforeAll(async () => {
    browser = await sharedChromium();
  });
  afterAll(async () => {
    await browser?.close();
  });
  beforeEach(async () => {
    context = await loopbackOnlyContext(browser);
  });
  afterEach(async () => {
    await context?.close();
  });

  /** Opens the client's authorization URL: the consent page, or whatever the server answers. */
  async function openAuthorization(pending: PendingSignIn): Promise<Page> {
    const page = await context.newPage();
    const response = await page.goto(pending.authorizationUrl.toString());
    expect(response?.status(), await page.content()).toBe(200);
    return page;
  }

  /** Clicks a consent button and returns where the browser was sent to the client. */
  async function decide(page: Page, button: "Allow" | "Deny", isClient: (url: URL) => boolean): Promise<URL> {
    const watch = watchClientRedirect(page, isClient);
    await page.getByRole("button", { name: button, exact: true }).click();
    return watch.redirect;
  }

  async function expectWorkingToken(baseUrl: string, session: OAuthSession, kind: McpClientKind = "v2-2025"): Promise<void> {
    const client = await connectMcpClient(kind, `${baseUrl}/mcp`, { headers: bearer(session) });
    try {
      expect((await client.listTools()).map((tool) => tool.name)).toEqual([EXPERT]);
    } finally {
      await client.close();
    }
  }

  /** The same ways in, for each identity provider. `upstreamOrigin`: the IdP's own origin, if any. */
  function signInPaths(provider: string, server: () => DevTeamServer, upstreamOrigin: () => string | undefined): void {
    it(`${provider}: a claude.ai-style client (https callback): Allow ends at the callback with a code that buys a working token`, async () => {
      const base = server().dev.baseUrl;
      const pending = await beginSignIn(base, { redirectUri: CLAUDE_AI_CALLBACK, clientName: "Claude" });
      const page = await openAuthorization(pending);
      const session = await pending.finish(await decide(page, "Allow", isClaudeAi));
      await expectWorkingToken(base, session);
    });

    it(`${provider}: a Claude Code-style client: the browser lands on its loopback listener, whose code buys a token a real MCP client uses`, async () => {
      const base = server().dev.baseUrl;
      const listener = await startLoopbackCallback();
      try {
        const pending = await beginSignIn(base, { redirectUri: listener.redirectUri, clientName: "Claude Code" });
        const page = await openAuthorization(pending);
        await visible(page.getByText("This sends access to an app on your computer."));
        await page.getByRole("button", { name: "Allow", exact: true }).click();
        const arrived = await listener.received;
        await page.waitForURL((url) => url.toString().startsWith(listener.redirectUri), { timeout: 10_000 });
        expect(await page.textContent("body")).toContain("You can close this window.");
        const session = await pending.finish(arrived);
        await expectWorkingToken(base, session, "v1-http");
      } finally {
        await listener.close();
      }
    });

    it(`${provider}: a Cursor-style native app: the browser is sent to cursor://…?code=…, and the code buys a working token`, async () => {
      const base = server().dev.baseUrl;
      const pending = await beginSignIn(base, { redirectUri: CURSOR_CALLBACK, clientName: "Cursor" });
      const page = await openAuthorization(pending);
      await visible(page.getByText("This sends access to an app on your computer (it opens cursor: links)."));
      await saveScreenshot(page, `consent-page-cursor-${provider}`);
      const redirect = await decide(page, "Allow", (url) => url.protocol === "cursor:");
      expect(`${redirect.protocol}//${redirect.host}${redirect.pathname}`).toBe(CURSOR_CALLBACK);
      expect(redirect.searchParams.get("code")).toBeTruthy();
      await expectWorkingToken(base, await pending.finish(redirect));
    });

    it(`${provider}: Deny sends the client error=access_denied and no code, and never reaches the identity provider`, async () => {
      const pending = await beginSignIn(server().dev.baseUrl, { redirectUri: CLAUDE_AI_CALLBACK, clientName: "Claude" });
      const page = await openAuthorization(pending);
      const seen: string[] = [];
      page.on("request", (request) => seen.push(new URL(request.url()).origin));
      const redirect = await decide(page, "Deny", isClaudeAi);
      expect(redirect.searchParams.get("error")).toBe("access_denied");
      expect(redirect.searchParams.has("code")).toBe(false);
      await expect(pending.finish(redirect)).rejects.toThrow(/carries no code: access_denied/);
      const upstream = upstreamOrigin();
      if (upstream) expect(seen).not.toContain(upstream);
    });

    it(`${provider}: an unregistered redirect URI gets a plain error page; the browser is never sent there`, async () => {
      const pending = await beginSignIn(server().dev.baseUrl, { redirectUri: CLAUDE_AI_CALLBACK, clientName: "Claude" });
      const tampered = new URL(pending.authorizationUrl);
      tampered.searchParams.set("redirect_uri", "https://attacker.example/callback");
      const page = await context.newPage();
      const seen: string[] = [];
      page.on("request", (request) => seen.push(new URL(request.url()).host));
      const response = await page.goto(tampered.toString());
      expect(response?.status()).toBe(400);
      await visible(page.getByRole("heading", { name: "This sign-in cannot continue" }));
      expect(await page.getByRole("button").count()).toBe(0);
      expect(seen).not.toContain("attacker.example");
      expect(new URL(page.url()).host).toBe(new URL(server().dev.baseUrl).host);
    });
  }

  describe("dev identity provider", () => {
    let server: DevTeamServer;
    beforeAll(async () => {
      server = await startDevTeamServer({ TENANT });
    });
    afterAll(async () => {
      await server?.stop();
    });

    signInPaths(
      "dev",
      () => server,
      () => undefined,
    );

    it("dev: the consent page names the team and host, makes Allow the primary default button, and labels its controls", async () => {
      const pending = await beginSignIn(server.dev.baseUrl, { redirectUri: CLAUDE_AI_CALLBACK, clientName: "Claude" });
      const page = await openAuthorization(pending);
      const host = new URL(server.dev.baseUrl).host;
      await visible(page.getByText(`Slipsnisse of team ${TENANT} at ${host}`));
      expect(await page.getByRole("heading", { level: 1 }).innerText()).toBe("Allow Claude to use Slipsnisse as you?");
      expect(await page.title()).toBe(`Authorize Claude for team ${TENANT}`);
      // CSS :default matches the form's default button (HTML: the first submit button).
      expect(await page.locator("form button:default").allInnerTexts()).toEqual(["Allow"]);
      expect(await page.getByRole("button").allInnerTexts()).toEqual(["Allow", "Deny"]);
      // Serialised into the page (no closure); the Node test's types have no DOM.
      const background = (name: string) =>
        page
          .getByRole("button", { name, exact: true })
          .evaluate(
            (button) => (globalThis as unknown as { getComputedStyle(element: unknown): { backgroundColor: string } }).getComputedStyle(button).backgroundColor,
          );
      expect(await background("Allow")).toBe("rgb(29, 78, 216)");
      expect(await background("Deny")).toBe("rgb(255, 255, 255)");
      expect(await page.getByLabel("Sign in as").inputValue()).toBe("alice");
      await page.setViewportSize({ width: 900, height: 700 });
      await saveScreenshot(page, "consent-page-dev");
    });

    it('dev: picking bob under "Sign in as" signs bob in: the token is bob\'s', async () => {
      const pending = await beginSignIn(server.dev.baseUrl, { redirectUri: CLAUDE_AI_CALLBACK, clientName: "Claude" });
      const page = await openAuthorization(pending);
      await page.getByLabel("Sign in as").selectOption("bob");
      const session = await pending.finish(await decide(page, "Allow", isClaudeAi));
      // workers-oauth-provider tokens read `<userId>:<grantId>:<secret>`; the dev user id is `dev-<login>`.
      expect(session.accessToken.split(":")[0]).toBe("dev-bob");
      await expectWorkingToken(server.dev.baseUrl, session);
    });
  });

  describe("OpenID Connect identity provider (oauth2-mock-server)", () => {
    const issuer = new OAuth2Server();
    let server: DevTeamServer;
    let issuerOrigin = "";

    beforeAll(async () => {
      await issuer.issuer.keys.generate("RS256");
      await issuer.start(0, "127.0.0.1");
      issuerOrigin = new URL(issuer.issuer.url ?? "").origin;
      // The mock approves every authorization at once; the ID token says who signed in upstream.
      issuer.service.on("beforeTokenSigning", (token: { payload: Record<string, unknown> }) =>
        Object.assign(token.payload, { sub: "kc-ada", email: "ada@example.com", email_verified: true, preferred_username: "ada", groups: ["engineering"] }),
      );
      server = await startDevTeamServer(
        { TENANT, IDP: "oidc", OIDC_ISSUER: (issuer.issuer.url ?? "").replace(/\/+$/, ""), OIDC_CLIENT_ID: "slipsnisse", ALLOWED_GROUPS: "engineering" },
        { OIDC_CLIENT_SECRET: "mock-client-secret" },
      );
    });
    afterAll(async () => {
      await server?.stop();
      await issuer.stop();
    });

    signInPaths(
      "oidc",
      () => server,
      () => issuerOrigin,
    );

    it("oidc: Allow takes the browser through the identity provider's authorize endpoint and back", async () => {
      const pending = await beginSignIn(server.dev.baseUrl, { redirectUri: CLAUDE_AI_CALLBACK, clientName: "Claude" });
      const page = await openAuthorization(pending);
      const visited: string[] = [];
      page.on("request", (request) => visited.push(`${new URL(request.url()).origin}${new URL(request.url()).pathname}`));
      const session = await pending.finish(await decide(page, "Allow", isClaudeAi));
      expect(visited).toContain(`${issuerOrigin}/authorize`);
      expect(visited).toContain(`${server.dev.baseUrl}/auth/callback`);
      expect(session.accessToken.split(":")[0]).toBe("oidc-kc-ada");
    });
  });
});
