import type { Browser, BrowserContext } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chromiumSkipReason, sharedChromium, loopbackOnlyContext, saveScreenshot } from "../harness/chromium-browser";
import { sharedDevTeamServer, type DevTeamServer } from "./dev-team-server";

const CALLBACK = "https://client.example/callback";
/** What leaked before: wrangler dev renders an uncaught error's stack into the body. */
const LEAKS = ["global_fetch_strictly_public", "    at ", "node_modules", "Error:"];

/**
 * Issue 35 against `wrangler dev` (OAuth on, the shared team server): a client id that is a URL
 * (a Client ID Metadata Document, which MCP 2026-07-28 clients prefer), a loopback URL or garbage
 * got a bare 500 at /authorize and a stack trace at /token. In Chromium the consent URL a client
 * opens shows the unknown client's page and goes nowhere; /token answers a client's JSON error.
 */
describe.skipIf(chromiumSkipReason !== undefined)(`Unknown client ids through wrangler dev${chromiumSkipReason ? ` (${chromiumSkipReason})` : ""}`, () => {
  let team: DevTeamServer;
  let browser: Browser;
  let context: BrowserContext;

  beforeAll(async () => {
    [team, browser] = await Promise.all([sharedDevTeamServer(), sharedChromium()]);
    context = await loopbackOnlyContext(browser);
  });
  afterAll(async () => {
    await browser?.close();
    await team?.stop();
  });

  const clientIds = ["https://client.example/oauth/metadata.json", "http://127.0.0.1/client.json", "not a client", "x".repeat(600)];

  it("shows /authorize's unknown-client page in Chromium and redirects nowhere", async () => {
    const page = await context.newPage();
    for (const clientId of clientIds) {
      const query = new URLSearchParams({
        response_type: "code",
        client_id: clientId,
        redirect_uri: CALLBACK,
        code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
        code_challenge_method: "S256",
        state: "state-1",
      });
      const response = await page.goto(`${team.dev.baseUrl}/authorize?${query}`);
      expect(response?.status(), clientId.slice(0, 60)).toBe(400);
      expect(new URL(page.url()).origin).toBe(team.dev.baseUrl);
      await expect(page.getByRole("heading", { name: "This sign-in cannot continue" }).isVisible()).resolves.toBe(true);
      const text = await page.locator("body").innerText();
      expect(text).toContain("Invalid client_id");
      for (const leak of LEAKS) expect(text).not.toContain(leak);
    }
    await saveScreenshot(page, "authorize-url-client-id");
    await page.close();
  });

  it("answers /token with invalid_client as JSON, and no stack trace", async () => {
    for (const clientId of clientIds) {
      const response = await fetch(`${team.dev.baseUrl}/token`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({
          grant_type: "authorization_code",
          code: "a:b:c",
          code_verifier: "v".repeat(43),
          redirect_uri: CALLBACK,
          client_id: clientId,
        }),
      });
      const body = await response.text();
      expect(response.status, body.slice(0, 300)).toBe(401);
      expect((JSON.parse(body) as { error?: string }).error).toBe("invalid_client");
      for (const leak of LEAKS) expect(body).not.toContain(leak);
    }
  });
});
