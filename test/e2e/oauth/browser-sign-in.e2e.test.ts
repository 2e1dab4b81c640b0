import type { Browser, BrowserContext } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chromiumSkipReason, launchChromium, loopbackOnlyContext, watchClientRedirect } from "../harness/chromium-browser";
import { connectMcpClient } from "../harness/mcp-clients";
import { beginSignIn, bearer } from "../harness/oauth-sign-in";
import { EXPERT, startDevTeamServer, type DevTeamServer } from "./dev-team-server";

const CLAUDE_AI_CALLBACK = "https://claude.ai/api/mcp/auth_callback";

/**
 * The consent page in a real browser, with the dev identity provider: a person clicks Allow or
 * Deny, and the browser must end at the client's callback. Chromium applies CSP `form-action`
 * to the redirects that follow the form POST, which a fetch-driven test never sees.
 */
describe.skipIf(chromiumSkipReason !== undefined)(`Sign-in in Chromium through wrangler dev (dev identity provider)${chromiumSkipReason ? ` (${chromiumSkipReason})` : ""}`, () => {
  let server: DevTeamServer;
  let browser: Browser;
  let context: BrowserContext;

  beforeAll(async () => {
    [server, browser] = await Promise.all([startDevTeamServer(), launchChromium()]);
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  it("a claude.ai-style client (https callback): Allow ends at the callback with a code that buys a working token", async () => {
    context = await loopbackOnlyContext(browser);
    const pending = await beginSignIn(server.dev.baseUrl, { redirectUri: CLAUDE_AI_CALLBACK, clientName: "Claude" });
    const page = await context.newPage();
    await page.goto(pending.authorizationUrl.toString());
    const watch = watchClientRedirect(page, (url) => url.origin === "https://claude.ai");
    await page.getByRole("button", { name: "Allow" }).click();
    const session = await pending.finish(await watch.redirect);

    const client = await connectMcpClient("v2-2025", `${server.dev.baseUrl}/mcp`, { headers: bearer(session) });
    try {
      expect((await client.listTools()).map((tool) => tool.name)).toEqual([EXPERT]);
    } finally {
      await client.close();
      await context.close();
    }
  });
});
