import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chromiumSkipReason, launchChromium, loopbackOnlyContext, saveScreenshot } from "../harness/chromium-browser";
import { sharedDevTeamServer, type DevTeamServer } from "../oauth/dev-team-server";

/** A connect link's shape (connect-routes.ts); no flow has this id, so the page says the link is not this member's. */
const FLOW = "e2eMemberSignIn0123456789abcdef";

/**
 * Members sign in through the dashboard's sign-in page too, to reach /connect (a connect link
 * from their client, or their Connections page). On the shared team server (OAuth, dev identity
 * provider; ADMIN_USERS empty, so alice and bob are members) Chromium opens a connect link
 * signed out: the sign-in page names Slipsnisse, not its admin dashboard, and after signing in
 * the browser is back on that link. A member who opens the sign-in page on their own lands on
 * their Connections, and a return path pointing elsewhere (`//host`, `/\host`, an encoded
 * separator, a climb to /admin) lands there too, on this origin.
 */
describe.skipIf(chromiumSkipReason !== undefined)(`Member sign-in in Chromium${chromiumSkipReason ? ` (${chromiumSkipReason})` : ""}`, () => {
  let team: DevTeamServer;
  let browser: Browser;

  beforeAll(async () => {
    [team, browser] = await Promise.all([sharedDevTeamServer(), launchChromium()]);
  });
  afterAll(async () => {
    await browser?.close();
    await team?.stop();
  });

  /** A fresh signed-out browser profile whose requests stay on loopback. */
  async function freshPage(): Promise<{ page: Page; context: BrowserContext }> {
    const context = await loopbackOnlyContext(browser);
    return { page: await context.newPage(), context };
  }

  it("sends a member from a connect link through sign-in and back to that link", async () => {
    const { page, context } = await freshPage();
    try {
      await page.goto(`${team.dev.baseUrl}/connect/${FLOW}`);
      expect(new URL(page.url()).pathname).toBe("/admin/login");
      await expect(page.getByRole("heading", { name: "Sign in to Slipsnisse" }).isVisible()).resolves.toBe(true);
      await expect(page.getByText("you come back to it once you are signed in").isVisible()).resolves.toBe(true);
      await expect(page.locator("header .brand").textContent()).resolves.toBe("Slipsnisse");
      expect(await page.title()).not.toContain("admin");
      await saveScreenshot(page, "member-sign-in-from-connect-link");
      await page.getByRole("link", { name: "Sign in as bob" }).click();
      await page.waitForURL((url) => !url.pathname.startsWith("/admin/login"));
      expect(new URL(page.url()).href).toBe(`${team.dev.baseUrl}/connect/${FLOW}`);
      await expect(page.getByRole("heading", { name: "No such connect link" }).isVisible()).resolves.toBe(true);
      await expect(page.getByText("This link is not for bob").isVisible()).resolves.toBe(true);
    } finally {
      await context.close();
    }
  });

  it("lands a member who signs in on their own on their Connections, not on the admins-only page", async () => {
    const { page, context } = await freshPage();
    try {
      await page.goto(`${team.dev.baseUrl}/admin/login`);
      await expect(page.getByText("every member reaches their own connections").isVisible()).resolves.toBe(true);
      await page.getByRole("link", { name: "Sign in as alice" }).click();
      await page.waitForURL((url) => !url.pathname.startsWith("/admin/login"));
      expect(new URL(page.url()).href).toBe(`${team.dev.baseUrl}/connect`);
      await expect(page.getByRole("heading", { name: "Connections", exact: true }).isVisible()).resolves.toBe(true);
      await saveScreenshot(page, "member-sign-in-lands-on-connections");
    } finally {
      await context.close();
    }
  });

  it("never follows a return path that leaves /connect on this origin: the member lands on their Connections", async () => {
    // The browser's own reading of each; the Worker's rule meets every other disguise in test/dashboard/sign-in-return.test.ts.
    const attacks = ["//evil.example/connect", "/\\evil.example/connect", "/connect/%2F%2Fevil.example", "/connect/../admin/members"];
    const { page, context } = await freshPage();
    try {
      for (const next of attacks) {
        await page.context().clearCookies();
        await page.goto(`${team.dev.baseUrl}/admin/login?${new URLSearchParams({ next })}`);
        await page.getByRole("link", { name: "Sign in as bob" }).click();
        await page.waitForURL((url) => !url.pathname.startsWith("/admin/login"));
        expect(new URL(page.url()).href, next).toBe(`${team.dev.baseUrl}/connect`);
      }
    } finally {
      await context.close();
    }
  });
});
