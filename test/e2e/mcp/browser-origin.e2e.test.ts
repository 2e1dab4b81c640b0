import { type Browser, chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadCatalog } from "../harness/catalog-admin";
import { bearer, signIn, type OAuthSession } from "../harness/oauth-sign-in";
import { startWranglerDev, type WranglerDev } from "../harness/wrangler-dev";
import { projectWithSecrets, type ProjectWithSecrets } from "../oauth/project-with-secrets";

const ALLOWED = "https://claude.ai";
const OTHER = "https://evil.example";
const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
];

const initialize = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "browser-page", version: "0.0.0" } },
};

interface PageFetch {
  status?: number;
  body?: string;
  error?: string;
}

/**
 * Browser-origin checks with signed-in users: a page on a tenant's ALLOWED_ORIGINS (claude.ai's
 * web client) calls /mcp with a valid token; a page on any other origin is stopped at the CORS
 * preflight, which must agree with what the request itself would get.
 */
describe("browser origins on the MCP endpoint (ALLOWED_ORIGINS)", () => {
  let project: ProjectWithSecrets;
  let dev: WranglerDev;
  let session: OAuthSession;
  let browser: Browser;

  beforeAll(async () => {
    project = await projectWithSecrets();
    dev = await startWranglerDev({
      projectDir: project.dir,
      vars: { ENVIRONMENT: "local", AUTH: "oauth", IDP: "dev", DEV_USER: "dev", ALLOWED_ORIGINS: ALLOWED },
    });
    await loadCatalog(
      dev.baseUrl,
      {
        skills: {
          default: { experts: [{ name: "ask", description: "Answers.", provider: "openai-compatible", base_url: "http://127.0.0.1:9/v1", model: "none" }] },
        },
      },
      bearer({ accessToken: project.adminToken }),
    );
    session = await signIn(dev.baseUrl);
    browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: CHROMIUM_ARGS });
  });
  afterAll(async () => {
    await browser?.close();
    await dev?.stop();
    await project?.remove();
  });

  /**
   * Opens a page at `origin` (served by the test: no network) and runs a cross-origin fetch to
   * the Worker from it, the way a web client does. The page is public and the Worker on
   * loopback, so Chromium's Local Network Access needs the permission a user would grant;
   * interception ends before the fetch so the preflight really reaches the Worker.
   */
  async function fetchFromPage(origin: string, path: string): Promise<PageFetch> {
    const context = await browser.newContext({ permissions: ["local-network-access"] });
    try {
      await context.route(`${origin}/**`, (route) => route.fulfill({ status: 200, contentType: "text/html", body: "<!doctype html><title>client</title>" }));
      const page = await context.newPage();
      await page.goto(`${origin}/connector`);
      await context.unrouteAll();
      return await page.evaluate(
        async ({ url, token, body }) => {
          try {
            const response = await fetch(url, {
              method: "POST",
              headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json", Accept: "application/json, text/event-stream" },
              body: JSON.stringify(body),
            });
            return { status: response.status, body: await response.text() };
          } catch (error) {
            return { error: String(error) };
          }
        },
        { url: `${dev.baseUrl}${path}`, token: session.accessToken, body: initialize },
      );
    } finally {
      await context.close();
    }
  }

  it("a page on an allowed origin calls /mcp and /s/<skill>/mcp with a valid token", async () => {
    for (const path of ["/mcp", "/s/default/mcp"]) {
      const answer = await fetchFromPage(ALLOWED, path);
      expect(answer.error).toBeUndefined();
      expect(answer.status, answer.body).toBe(200);
      expect(answer.body).toContain('"name":"slipsnisse"');
    }
  });

  it("a page on another origin is stopped at the preflight", async () => {
    const answer = await fetchFromPage(OTHER, "/mcp");
    expect(answer.status).toBeUndefined();
    expect(answer.error).toMatch(/Failed to fetch/);
  });

  it("the preflight and the request agree for each origin, on /mcp and /sse", async () => {
    const preflight = (origin: string, path: string) =>
      fetch(`${dev.baseUrl}${path}`, {
        method: "OPTIONS",
        headers: { Origin: origin, "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "authorization,content-type" },
      });
    const request = (origin: string) =>
      fetch(`${dev.baseUrl}/mcp`, {
        method: "POST",
        headers: { ...bearer(session), Origin: origin, "Content-Type": "application/json", Accept: "application/json, text/event-stream" },
        body: JSON.stringify(initialize),
      });

    const allowedPreflight = await preflight(ALLOWED, "/mcp");
    expect(allowedPreflight.status).toBe(204);
    expect(allowedPreflight.headers.get("access-control-allow-origin")).toBe(ALLOWED);
    expect(allowedPreflight.headers.get("access-control-allow-headers")).toContain("Authorization");
    const allowedRequest = await request(ALLOWED);
    expect(allowedRequest.status).toBe(200);
    await allowedRequest.body?.cancel();

    for (const path of ["/mcp", "/sse", "/sse/message"]) {
      const refused = await preflight(OTHER, path);
      expect(refused.status, path).toBe(403);
      expect(refused.headers.get("access-control-allow-origin"), path).toBeNull();
      await refused.body?.cancel();
    }
    const refusedRequest = await request(OTHER);
    expect(refusedRequest.status).toBe(403);
    expect(await refusedRequest.text()).toContain("ALLOWED_ORIGINS");
    // DNS-rebinding protection for unknown origins is unchanged, and localhost pages still pass.
    const localPage = await request("http://localhost:6274");
    expect(localPage.status).toBe(200);
    await localPage.body?.cancel();
  });
});
