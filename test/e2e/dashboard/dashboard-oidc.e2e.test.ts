import { OAuth2Server } from "oauth2-mock-server";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chromiumSkipReason, sharedChromium, loopbackOnlyContext, saveScreenshot } from "../harness/chromium-browser";
import { startDevTeamServer, type DevTeamServer } from "../oauth/dev-team-server";

/**
 * The dashboard's sign-in through a real OpenID Connect server (oauth2-mock-server on loopback,
 * which approves every authorization request at once) in Chromium: discovery, PKCE, nonce and
 * ID-token validation on /admin/login/callback, then membership by group and the admin role by
 * email. Who signs in upstream is set per test through the claims the issuer signs.
 */
describe.skipIf(chromiumSkipReason !== undefined)(`Dashboard sign-in with OIDC in Chromium${chromiumSkipReason ? ` (${chromiumSkipReason})` : ""}`, () => {
  const issuer = new OAuth2Server();
  let claims: Record<string, unknown> = {};
  let server: DevTeamServer;
  let browser: Browser;

  beforeAll(async () => {
    await issuer.issuer.keys.generate("RS256");
    await issuer.start(0, "127.0.0.1");
    issuer.service.on("beforeTokenSigning", (token: { payload: Record<string, unknown> }) => Object.assign(token.payload, claims));
    [server, browser] = await Promise.all([
      startDevTeamServer(
        {
          IDP: "oidc",
          OIDC_ISSUER: (issuer.issuer.url ?? "").replace(/\/+$/, ""),
          OIDC_CLIENT_ID: "slipsnisse",
          ALLOWED_GROUPS: "engineering",
          ADMIN_USERS: "ada@example.com",
        },
        { OIDC_CLIENT_SECRET: "mock-client-secret" },
      ),
      sharedChromium(),
    ]);
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    await issuer.stop();
  });

  /** A fresh browser profile opens /admin, is sent to the sign-in page and follows its one link to the issuer and back. */
  async function signInThroughIssuer(): Promise<{ page: Page; status: number | undefined; close(): Promise<void> }> {
    const context = await loopbackOnlyContext(browser);
    const page = await context.newPage();
    await page.goto(`${server.dev.baseUrl}/admin`);
    expect(new URL(page.url()).pathname).toBe("/admin/login");
    const callback = page.waitForResponse((response) => new URL(response.url()).pathname === "/admin/login/callback");
    await page.getByRole("link", { name: "Sign in" }).click();
    const status = (await callback).status();
    await page.waitForLoadState();
    return { page, status, close: () => context.close() };
  }

  it("signs an admin in through the issuer and shows the overview, named by the ID token's claims", async () => {
    claims = { sub: "kc-ada", email: "ada@example.com", email_verified: true, preferred_username: "ada", groups: ["engineering"] };
    const { page, status, close } = await signInThroughIssuer();
    try {
      expect(status).toBe(302);
      expect(new URL(page.url()).pathname).toBe("/admin");
      await expect(page.getByRole("heading", { name: "Overview" }).isVisible()).resolves.toBe(true);
      await expect(page.getByText("Signed in as ada").isVisible()).resolves.toBe(true);
      const cookies = await page.context().cookies();
      expect(cookies.find((cookie) => cookie.name === "__Host-slipsnisse-dashboard")).toMatchObject({ httpOnly: true, secure: true });
      await saveScreenshot(page, "dashboard-oidc-overview");
    } finally {
      await close();
    }
  });

  it("shows a member of the team who is not an admin the 'Admins only' page", async () => {
    claims = { sub: "kc-ben", email: "ben@example.com", email_verified: true, preferred_username: "ben", groups: ["engineering"] };
    const { page, close } = await signInThroughIssuer();
    try {
      const response = await page.goto(`${server.dev.baseUrl}/admin`);
      expect(response?.status()).toBe(403);
      await expect(page.getByRole("heading", { name: "Admins only" }).isVisible()).resolves.toBe(true);
    } finally {
      await close();
    }
  });

  it("shows 'Admins only' to a verified mallory@ whose preferred_username reads like the admin's email (issue 18)", async () => {
    claims = { sub: "kc-mallory", email: "mallory@example.com", email_verified: true, preferred_username: "ada@example.com", groups: ["engineering"] };
    const { page, status, close } = await signInThroughIssuer();
    try {
      expect(status).toBe(302);
      const response = await page.goto(`${server.dev.baseUrl}/admin`);
      expect(response?.status()).toBe(403);
      await expect(page.getByRole("heading", { name: "Admins only" }).isVisible()).resolves.toBe(true);
    } finally {
      await close();
    }
  });

  it("refuses someone outside the team's groups at the callback, with no session", async () => {
    claims = { sub: "kc-eve", email: "eve@example.org", email_verified: true, preferred_username: "eve", groups: ["sales"] };
    const { page, status, close } = await signInThroughIssuer();
    try {
      expect(status).toBe(403);
      await expect(
        page
          .getByText(/not a member/i)
          .first()
          .isVisible(),
      ).resolves.toBe(true);
      expect((await page.context().cookies()).some((cookie) => cookie.name === "__Host-slipsnisse-dashboard" && cookie.value !== "")).toBe(false);
      await saveScreenshot(page, "dashboard-oidc-not-member");
    } finally {
      await close();
    }
  });
});
