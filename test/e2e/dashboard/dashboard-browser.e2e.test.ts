import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFixtureServers, type RunningFixtureServers } from "../../fixtures/fixture-servers";
import { taggedBase } from "../../fixtures/fixture-stats-client";
import { loadCatalog } from "../harness/catalog-admin";
import { chromiumSkipReason, sharedChromium, loopbackOnlyContext, saveScreenshot } from "../harness/chromium-browser";
import { type ChatRequest, type ScriptedReply, textReply, toolCallsReply, toolResultMessages } from "../harness/fake-openai-server";
import { connectMcpClient, resultText } from "../harness/mcp-clients";
import { bearer, signInAs } from "../harness/oauth-sign-in";
import { startDevTeamServer, type DevTeamServer } from "../oauth/dev-team-server";
import { waitFor } from "../../support/wait-for";

const EXPERT = "echo_notes";
const INJECTED = "<script>alert(1)</script>";

/**
 * The `font-family` the stylesheet's `body` rule declares (empty when the browser dropped the
 * declaration), and body's computed font family and size. A string: the Node test's types have no DOM.
 */
const FONT_PROBE = `(() => {
  const rules = [...document.styleSheets].flatMap((sheet) => [...sheet.cssRules]);
  const body = rules.find((rule) => rule.selectorText === "body");
  const computed = getComputedStyle(document.body);
  return { declared: body ? body.style.fontFamily : "", computed: computed.fontFamily, size: computed.fontSize };
})()`;

/** The fake model: one echo of the query, then the tool's text as the answer. */
function echoThenAnswer(request: ChatRequest): ScriptedReply {
  const results = toolResultMessages(request);
  if (results.length > 0) return textReply(`echoed: ${results.map((r) => r.content).join(" | ")}`);
  const user = request.messages.filter((m) => m.role === "user").at(-1);
  return toolCallsReply({ name: "fx__echo", arguments: { text: String(user?.content) } });
}

/**
 * The admin dashboard in Chromium against `wrangler dev` with OAuth and the dev identity
 * provider: alice (an admin) signs in on /admin, bob (a member) and a signed-out browser are
 * refused. A real MCP client (SDK v2, signed in as alice) makes expert calls through the fake
 * model to the fixture server, whose echo tool then changes its description; the dashboard shows
 * the change side by side and accepts it, and restores a catalog version.
 */
describe.skipIf(chromiumSkipReason !== undefined)(`Admin dashboard in Chromium${chromiumSkipReason ? ` (${chromiumSkipReason})` : ""}`, () => {
  let team: DevTeamServer;
  let fixtures: RunningFixtureServers;
  let fxBase: string;
  let browser: Browser;
  let alice: BrowserContext;

  beforeAll(async () => {
    [team, fixtures, browser] = await Promise.all([startDevTeamServer({ ADMIN_USERS: "alice" }), startFixtureServers(), sharedChromium()]);
    fxBase = taggedBase(fixtures.urls.echo, "dashboard");
    await loadCatalog(
      team.dev.baseUrl,
      {
        skills: {
          default: {
            description: `Team notes ${INJECTED}`,
            servers: { fx: { url: `${fxBase}/mcp`, transport: "streamable-http", tool_list_ttl_ms: 0 } },
            experts: [
              {
                name: EXPERT,
                description: "Echoes the query through the fixture server.",
                internal_tools: { fx: ["echo"] },
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
    team.fake.reset(echoThenAnswer);
    alice = await loopbackOnlyContext(browser);
  });

  afterAll(async () => {
    await browser?.close();
    await Promise.allSettled([team?.stop(), fixtures?.stop(), fetch(`${fxBase}/tools/restore`, { method: "POST" })]);
  });

  async function expertCall(query: string): Promise<string> {
    const session = await signInAs(team.dev.baseUrl, "alice");
    const client = await connectMcpClient("v2-2025", `${team.dev.baseUrl}/mcp`, { headers: bearer(session) });
    try {
      return resultText(await client.callTool(EXPERT, { query }));
    } finally {
      await client.close();
    }
  }

  async function signInBrowser(context: BrowserContext, login: string): Promise<Page> {
    const page = await context.newPage();
    await page.goto(`${team.dev.baseUrl}/admin`);
    expect(new URL(page.url()).pathname).toBe("/admin/login");
    await page.getByRole("link", { name: `Sign in as ${login}` }).click();
    await page.waitForLoadState();
    return page;
  }

  it("signs an admin in through the dev identity provider and shows the overview", async () => {
    const page = await signInBrowser(alice, "alice");
    expect(new URL(page.url()).pathname).toBe("/admin");
    await expect(page.getByRole("heading", { name: "Overview" }).isVisible()).resolves.toBe(true);
    await expect(page.getByText("Signed in as alice").isVisible()).resolves.toBe(true);
    const cookies = await alice.cookies();
    expect(cookies.find((cookie) => cookie.name === "__Host-slipsnisse-dashboard")).toMatchObject({ httpOnly: true, secure: true, sameSite: "Lax", path: "/" });
    // The body's font is the stylesheet's, not the browser's default serif: an HTML-escaped
    // `<style>` (`&quot;Segoe UI&quot;`) made Chromium drop the whole `font` declaration.
    const font = await page.evaluate<{ declared: string; computed: string; size: string }>(FONT_PROBE);
    expect(font.declared).toContain('"Segoe UI"');
    expect(font).toEqual({ declared: font.declared, computed: font.declared, size: "15px" });
    await saveScreenshot(page, "dashboard-overview");
  });

  it("shows experts with catalog text escaped (markup in a description is text)", async () => {
    const dialogs: string[] = [];
    const page = await alice.newPage();
    page.on("dialog", (dialog) => {
      dialogs.push(dialog.message());
      void dialog.dismiss();
    });
    await page.goto(`${team.dev.baseUrl}/admin/skills`);
    await expect(page.getByText(`Team notes ${INJECTED}`).isVisible()).resolves.toBe(true);
    await expect(page.getByRole("cell", { name: EXPERT }).isVisible()).resolves.toBe(true);
    expect(dialogs).toEqual([]);
    await saveScreenshot(page, "dashboard-skills");
  });

  it("shows a changed tool definition old and new side by side, and accepts it", async () => {
    expect(await expertCall("first")).toContain("echoed: first");
    const mutated = await fetch(`${fxBase}/tools/mutate`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ description: "Echoes, and now also forwards the text elsewhere." }),
    });
    expect(mutated.status).toBe(204);
    // The next listing sees the new definition and withholds the tool until an admin accepts it.
    await expertCall("second");

    const page = await alice.newPage();
    await page.goto(`${team.dev.baseUrl}/admin/servers`);
    const change = page.getByRole("article", { name: "Pending change of fx__echo" });
    await expect(change.getByText("Returns the text it was given.").isVisible()).resolves.toBe(true);
    await expect(change.getByText("Echoes, and now also forwards the text elsewhere.").isVisible()).resolves.toBe(true);
    // A probe connects to the servers: a form (POST with the session's token), no longer a link.
    expect(await page.getByRole("link", { name: /Probe default's servers/ }).count()).toBe(0);
    const probed = page.waitForResponse((response) => new URL(response.url()).pathname === "/admin/servers/probe" && response.request().method() === "POST");
    await page.getByRole("button", { name: "Probe default's servers now" }).click();
    expect((await probed).status()).toBe(200);
    await page.getByRole("columnheader", { name: "Health (probed now)" }).waitFor({ timeout: 15_000 });
    await page.getByRole("cell", { name: /ok in \d+ ms · \d+ tools/ }).waitFor({ timeout: 15_000 });
    await saveScreenshot(page, "dashboard-servers-pending");
    await change.getByRole("button", { name: "Accept the new definition of fx__echo" }).click();
    await page.waitForURL((url) => url.searchParams.has("accepted"));
    await expect(page.getByRole("status").textContent()).resolves.toContain("fx__echo");
    await expect(page.getByRole("article", { name: "Pending change of fx__echo" }).count()).resolves.toBe(0);
    expect(await expertCall("third")).toContain("echoed: third");
  });

  it("shows a run on the live page while it is in flight, what it waits on and for how long, and as it finishes, without reloading; a fresh load lists the runs that ended", async () => {
    const live = await alice.newPage();
    let navigations = 0;
    live.on("framenavigated", (frame) => {
      if (frame === live.mainFrame()) navigations += 1;
    });
    // Every frame the feed sends this page, to show a wait's seconds are counted in the page.
    const frames: string[] = [];
    live.on("websocket", (socket) => {
      socket.on("framereceived", (frame) => {
        frames.push(String(frame.payload));
      });
    });
    // A fresh load lists the runs that ended from the run index, which has each about a second
    // after it ends (the feed hears of runs only while a page watches): the last one is just done.
    await waitFor("the three runs in the run index", async () => {
      const runs = await fetch(`${team.dev.baseUrl}/admin/api/runs?skill=default&limit=50`, { headers: { Authorization: `Bearer ${team.adminToken}` } });
      const listed = ((await runs.json()) as { runs: unknown[] }).runs;
      return listed.length >= 3 ? true : undefined;
    });
    await live.goto(`${team.dev.baseUrl}/admin/live`);
    await live.getByRole("status").getByText("Connected.").waitFor({ timeout: 10_000 });
    // The three runs of the tests above ended minutes ago at most: a fresh load lists them, and
    // the empty table of runs in flight says what would appear there.
    const finishedRows = live.locator("#live-runs tr[data-run]");
    expect(await finishedRows.count()).toBe(3);
    await expect(live.locator("#live-in-flight").textContent()).resolves.toContain("No run in flight. A run appears here when someone calls an expert");
    // The model's second step (the answer) waits until the page has shown the run waiting on it.
    let release!: () => void;
    const secondStep = new Promise<void>((resolve) => {
      release = resolve;
    });
    team.fake.reset(async (request) => {
      if (toolResultMessages(request).length > 0) await secondStep;
      return echoThenAnswer(request);
    });
    try {
      const answer = expertCall(`notes ${INJECTED}`);
      const inFlight = live.locator("#live-in-flight tr[data-run]", { hasText: EXPERT });
      await inFlight.getByText("step 1 of 3").waitFor({ timeout: 15_000 });
      await expect(inFlight.getByText("calling fx__echo").isVisible()).resolves.toBe(true);
      await inFlight.getByText("waiting on model").waitFor({ timeout: 15_000 });
      // The wait's duration grows in the page, with no event from the feed while it does.
      const seconds = async () => Number(/^for (\d+) s$/.exec((await inFlight.locator("[data-since]").textContent()) ?? "")?.[1]);
      const first = await seconds();
      expect(first).toBeGreaterThanOrEqual(0);
      const framesBefore = frames.filter((frame) => frame !== "pong").length;
      // Polled from here: the page's CSP (rightly) refuses the evaluated string waitForFunction sends.
      await expect.poll(seconds, { timeout: 10_000, interval: 200 }).toBeGreaterThanOrEqual(first + 2);
      expect(frames.filter((frame) => frame !== "pong").length).toBe(framesBefore);
      await expect(inFlight.textContent()).resolves.toMatch(/waiting on model for \d+ s/);
      expect(await finishedRows.count()).toBe(3);
      await saveScreenshot(live, "dashboard-live-in-flight");
      release();
      expect(await answer).toContain("echoed: notes");
      await finishedRows.nth(3).waitFor({ timeout: 15_000 });
      expect(await finishedRows.count()).toBe(4);
      // Newest first: the run that just ended tops the table.
      await expect(finishedRows.first().textContent()).resolves.toContain("fx__echo ok");
      expect(await live.locator("#live-in-flight tr[data-run]").count()).toBe(0);
      await expect(live.locator("#live-in-flight").textContent()).resolves.toContain("No run in flight.");
      expect(navigations).toBe(1);
      await saveScreenshot(live, "dashboard-live");
    } finally {
      release();
      team.fake.reset(echoThenAnswer);
    }
    // A fresh load after the runs ended shows them, newest first, each linking to its trace.
    const ids = await finishedRows.evaluateAll((rows) => rows.map((row) => row.getAttribute("data-run")));
    await live.reload();
    await live.getByRole("status").getByText("Connected.").waitFor({ timeout: 10_000 });
    expect(await finishedRows.evaluateAll((rows) => rows.map((row) => row.getAttribute("data-run")))).toEqual(ids);
    expect(
      await live
        .locator("#live-runs")
        .getByRole("link", { name: /^Run [0-9a-f-]{36}$/ })
        .count(),
    ).toBe(4);
    await saveScreenshot(live, "dashboard-live-fresh-load");
    await live.close();

    const dialogs: string[] = [];
    const page = await alice.newPage();
    page.on("dialog", (dialog) => {
      dialogs.push(dialog.message());
      void dialog.dismiss();
    });
    // The index row is written just after the reply: reload until it is listed (bounded).
    const listed = page.getByRole("link", { name: /^Run [0-9a-f-]{36}$/ });
    for (let attempt = 0; attempt < 40 && (await listed.count()) < 4; attempt += 1) {
      await page.goto(`${team.dev.baseUrl}/admin/runs?expert=${EXPERT}`);
    }
    expect(await listed.count()).toBe(4);
    await saveScreenshot(page, "dashboard-runs");
    await listed.first().click();
    await page.waitForURL(/\/admin\/runs\/[0-9a-f-]{36}$/);
    const runId = page.url().split("/").at(-1);
    await expect(page.getByLabel("Run id").inputValue()).resolves.toBe(runId);
    const call = page.getByRole("region", { name: "Tool call fx__echo" });
    await expect(call.getByText(INJECTED).first().isVisible()).resolves.toBe(true);
    expect(await page.locator("script").count()).toBe(0);
    expect(dialogs).toEqual([]);
    await saveScreenshot(page, "dashboard-trace");

    await page.goto(`${team.dev.baseUrl}/admin`);
    await expect(page.getByRole("img", { name: /^Runs per day\./ }).isVisible()).resolves.toBe(true);
    await saveScreenshot(page, "dashboard-overview-with-runs");
  });

  it("restores a catalog version after reading the diff", async () => {
    const page = await alice.newPage();
    await page.goto(`${team.dev.baseUrl}/admin/catalog/default`);
    await expect(page.getByLabel("Differences between v1 and v2").textContent()).resolves.toContain("fx");
    await saveScreenshot(page, "dashboard-catalog");
    await page.getByRole("button", { name: "Restore version 1 of default" }).click();
    await page.waitForURL((url) => url.searchParams.has("restored"));
    await expect(page.getByRole("status").textContent()).resolves.toContain("v3 is now current");
    await page.setViewportSize({ width: 390, height: 844 });
    await saveScreenshot(page, "dashboard-catalog-phone");
    const live = await fetch(`${team.dev.baseUrl}/admin/api/skills/default`, { headers: { Authorization: `Bearer ${team.adminToken}` } });
    expect(((await live.json()) as { version: number; config: { experts: { name: string }[] } }).config.experts.map((e) => e.name)).toEqual(["ask_notes"]);
  });

  it("revokes a member's grants from the members page: their token stops working at once", async () => {
    const bobSession = await signInAs(team.dev.baseUrl, "bob");
    const client = await connectMcpClient("v2-2025", `${team.dev.baseUrl}/mcp`, { headers: bearer(bobSession) });
    // The catalog was restored to the team's first version above: its expert is listed.
    expect((await client.listTools()).map((tool) => tool.name)).toEqual(["ask_notes"]);
    await client.close();

    const page = await alice.newPage();
    await page.goto(`${team.dev.baseUrl}/admin/members`);
    await expect(page.getByRole("cell", { name: /^bob/ }).isVisible()).resolves.toBe(true);
    // Not on the admin's own row; on bob's, styled as the dangerous action it is.
    const ownRow = page.getByRole("row").filter({ has: page.getByRole("cell", { name: /^alice/ }) });
    await expect(ownRow.getByText("You (sign out instead)").isVisible()).resolves.toBe(true);
    expect(await ownRow.getByRole("link", { name: /Revoke/ }).count()).toBe(0);
    expect(await ownRow.getByRole("button", { name: /Revoke/ }).count()).toBe(0);
    const revokeBob = page.getByRole("link", { name: "Revoke bob…" });
    const color = (selector: string) => `getComputedStyle(document.querySelector(${JSON.stringify(selector)})).color`;
    expect(await page.evaluate<string>(color('a.button.danger[aria-label="Revoke bob…"]'))).toBe("rgb(180, 35, 24)");
    await saveScreenshot(page, "dashboard-members");
    // The first click only asks; bob's token still works.
    await revokeBob.click();
    await page.getByRole("heading", { name: "Revoke bob?" }).waitFor();
    await expect(page.getByText("This ends their tokens and dashboard sessions").isVisible()).resolves.toBe(true);
    expect(await page.evaluate<string>(`getComputedStyle(document.querySelector("button.danger")).backgroundColor`)).toBe("rgb(180, 35, 24)");
    await saveScreenshot(page, "dashboard-members-revoke-confirm");
    const stillIn = await fetch(`${team.dev.baseUrl}/mcp`, {
      method: "POST",
      headers: { ...bearer(bobSession), "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    expect(stillIn.status).toBe(200);
    await stillIn.body?.cancel();
    await page.getByRole("button", { name: "Revoke every grant and dashboard session of bob" }).click();
    await page.waitForURL((url) => url.searchParams.has("revoked"));
    await expect(page.getByRole("status").textContent()).resolves.toContain("bob");
    const after = await fetch(`${team.dev.baseUrl}/mcp`, {
      method: "POST",
      headers: { ...bearer(bobSession), "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    expect(after.status).toBe(401);
  });

  it("refuses a member who is not an admin on every page, and a signed-out browser", async () => {
    const bob = await loopbackOnlyContext(browser);
    try {
      const page = await signInBrowser(bob, "bob");
      for (const path of [
        "/admin",
        "/admin/runs",
        "/admin/live",
        "/admin/members",
        "/admin/skills",
        "/admin/servers",
        "/admin/catalog",
        "/admin/catalog/default",
        "/admin/evals",
      ]) {
        const response = await page.goto(`${team.dev.baseUrl}${path}`);
        expect(response?.status(), path).toBe(403);
        await expect(page.getByRole("heading", { name: "Admins only" }).isVisible(), path).resolves.toBe(true);
      }
      await saveScreenshot(page, "dashboard-member-refused");
    } finally {
      await bob.close();
    }
    const stranger = await loopbackOnlyContext(browser);
    try {
      const page = await stranger.newPage();
      for (const path of ["/admin", "/admin/runs", "/admin/live", "/admin/servers", "/admin/catalog/default"]) {
        await page.goto(`${team.dev.baseUrl}${path}`);
        expect(new URL(page.url()).pathname, path).toBe("/admin/login");
      }
      await saveScreenshot(page, "dashboard-sign-in");
    } finally {
      await stranger.close();
    }
  });

  it("signs out on the server: the open live page says so, and a copy of the old cookie opens nothing", async () => {
    const signedIn = await loopbackOnlyContext(browser);
    const copy = await loopbackOnlyContext(browser);
    try {
      const live = await signInBrowser(signedIn, "alice");
      await live.goto(`${team.dev.baseUrl}/admin/live`);
      await live.getByRole("status").getByText("Connected.").waitFor({ timeout: 10_000 });
      await copy.addCookies(await signedIn.cookies());
      const other = await signedIn.newPage();
      await other.goto(`${team.dev.baseUrl}/admin`);
      await other.getByRole("button", { name: "Sign out" }).click();
      await other.waitForURL((url) => url.pathname === "/admin/login");
      await live.getByRole("status").getByText("Signed out. Reload the page to sign in again.").waitFor({ timeout: 10_000 });
      const stolen = await copy.newPage();
      await stolen.goto(`${team.dev.baseUrl}/admin`);
      expect(new URL(stolen.url()).pathname).toBe("/admin/login");
    } finally {
      await Promise.all([signedIn.close(), copy.close()]);
    }
  });
});
