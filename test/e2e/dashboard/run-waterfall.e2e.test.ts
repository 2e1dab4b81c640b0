import type { Browser, BrowserContext } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFixtureServers, type RunningFixtureServers } from "../../fixtures/fixture-servers";
import { taggedBase } from "../../fixtures/fixture-stats-client";
import { loadCatalog } from "../harness/catalog-admin";
import { chromiumSkipReason, launchChromium, loopbackOnlyContext, saveScreenshot } from "../harness/chromium-browser";
import { type ChatRequest, type ScriptedReply, textReply, toolCallsReply, toolResultMessages } from "../harness/fake-openai-server";
import { connectMcpClient, resultText } from "../harness/mcp-clients";
import { bearer, signInAs } from "../harness/oauth-sign-in";
import { startDevTeamServer, type DevTeamServer } from "../oauth/dev-team-server";

const EXPERT = "timed_notes";
const INJECTED = "<img src=x onerror=alert(1)>";
const SLEEP_MS = 400;

/** The fake model: one step with six calls (a 400 ms sleep among quick ones and a failure), then, 150 ms later, the answer. */
async function sixCallsThenAnswer(request: ChatRequest): Promise<ScriptedReply> {
  if (toolResultMessages(request).length > 0) {
    await new Promise((resolve) => setTimeout(resolve, 150));
    return textReply("done");
  }
  return toolCallsReply(
    { name: "fx__sleep", arguments: { ms: SLEEP_MS } },
    { name: "fx__echo", arguments: { text: "one" } },
    { name: "fx__echo", arguments: { text: "two" } },
    { name: "fx__fail", arguments: { message: INJECTED } },
    { name: "fx__echo", arguments: { text: "three" } },
    { name: "fx__echo", arguments: { text: "four" } },
  );
}

/**
 * The run page's waterfall in Chromium, after a real expert call through `wrangler dev`, the
 * fake model and the fixture server: every step and call is a bar with a width, on one time axis
 * in the order they ran, and a six-call step stays a few lines tall until a call is opened.
 */
describe.skipIf(chromiumSkipReason !== undefined)(`Run waterfall in Chromium${chromiumSkipReason ? ` (${chromiumSkipReason})` : ""}`, () => {
  let team: DevTeamServer;
  let fixtures: RunningFixtureServers;
  let fxBase: string;
  let browser: Browser;
  let alice: BrowserContext;

  beforeAll(async () => {
    [team, fixtures, browser] = await Promise.all([startDevTeamServer({ ADMIN_USERS: "alice" }), startFixtureServers(), launchChromium()]);
    fxBase = taggedBase(fixtures.urls.echo, "waterfall");
    await loadCatalog(
      team.dev.baseUrl,
      {
        skills: {
          default: {
            servers: { fx: { url: `${fxBase}/mcp`, transport: "streamable-http" } },
            experts: [
              {
                name: EXPERT,
                description: "Calls the fixture server six times at once.",
                internal_tools: { fx: ["sleep", "echo", "fail"] },
                provider: "openai-compatible",
                base_url: team.fake.baseURL,
                model: "fake-cheap",
                budget: { max_steps: 3, timeout_ms: 20_000, max_output_tokens: 256, max_tool_calls: 6, max_tool_result_bytes: 4_096 },
              },
            ],
          },
        },
      },
      { Authorization: `Bearer ${team.adminToken}` },
    );
    team.fake.reset(sixCallsThenAnswer);
    alice = await loopbackOnlyContext(browser);
  });

  afterAll(async () => {
    await browser?.close();
    await Promise.allSettled([team?.stop(), fixtures?.stop()]);
  });

  it("draws each step and call as a bar with a width, ordered on the time axis, compact for a six-call step", async () => {
    const session = await signInAs(team.dev.baseUrl, "alice");
    const client = await connectMcpClient("v2-2025", `${team.dev.baseUrl}/mcp`, { headers: bearer(session) });
    try {
      expect(resultText(await client.callTool(EXPERT, { query: "time it" }))).toContain("done");
    } finally {
      await client.close();
    }

    const page = await alice.newPage();
    const dialogs: string[] = [];
    page.on("dialog", (dialog) => {
      dialogs.push(dialog.message());
      void dialog.dismiss();
    });
    await page.goto(`${team.dev.baseUrl}/admin`);
    await page.getByRole("link", { name: "Sign in as alice" }).click();
    await page.waitForLoadState();
    // The index row is written just after the reply: reload until it is listed (bounded).
    const listed = page.getByRole("link", { name: /^Run [0-9a-f-]{36}$/ });
    for (let attempt = 0; attempt < 40 && (await listed.count()) < 1; attempt += 1) {
      await page.goto(`${team.dev.baseUrl}/admin/runs?expert=${EXPERT}`);
    }
    await listed.first().click();
    await page.waitForURL(/\/admin\/runs\/[0-9a-f-]{36}$/);
    await page.setViewportSize({ width: 1280, height: 800 });

    const bars = await page.locator("rect.wf-bar").evaluateAll((rects) =>
      rects.map((rect) => {
        const box = rect.getBoundingClientRect();
        const track = rect.closest("svg")?.getBoundingClientRect();
        return {
          kind: rect.getAttribute("class")?.replace("wf-bar wf-", ""),
          x: box.x - (track?.x ?? 0),
          width: box.width,
          top: box.top,
          trackWidth: track?.width ?? 0,
        };
      }),
    );
    expect(bars.map((bar) => bar.kind)).toEqual(["setup", "model", "tool", "tool", "tool", "failed", "tool", "tool", "model"]);
    for (const bar of bars) expect(bar.width).toBeGreaterThan(0);
    const [setup, model1, sleep, , , , , , model2] = bars;
    if (!setup || !model1 || !sleep || !model2) throw new Error("nine bars expected");
    expect(model1.x).toBeGreaterThanOrEqual(setup.x + setup.width - 1);
    // Left to right in the order they ran: the first model wait, its calls, the answer after the sleep returned.
    for (const call of bars.slice(2, 8)) expect(call.x).toBeGreaterThanOrEqual(model1.x);
    expect(model2.x).toBeGreaterThanOrEqual(sleep.x + sleep.width - 1);
    // The 400 ms sleep is the widest call: a slow server shows at a glance.
    expect(sleep.width).toBe(Math.max(...bars.slice(2, 8).map((bar) => bar.width)));

    // Compact: the six-call step is one line per bar, its details closed until asked for.
    const timeline = page.getByRole("list", { name: "Run timeline" });
    const height = await timeline.evaluate((element) => element.getBoundingClientRect().height);
    expect(height).toBeLessThan(9 * 40);
    expect(await page.locator("li.wf-compact").count()).toBe(1);
    expect(await page.locator("li.wf-compact details[open]").count()).toBe(0);
    await saveScreenshot(page, "run-waterfall");

    const failed = page.locator("ol.wf-calls summary", { hasText: "fx__fail" });
    await failed.click();
    const call = page.getByRole("region", { name: "Tool call fx__fail" });
    await expect(call.getByText(INJECTED).first().isVisible()).resolves.toBe(true);
    expect(dialogs).toEqual([]);
    await saveScreenshot(page, "run-waterfall-call-open");
  });

  it("marks a run whose model called a tool it does not have, and filters runs by the login the list shows", async () => {
    // As if steered by text it read, the model calls a tool this expert was never given.
    team.fake.reset((request) =>
      toolResultMessages(request).length > 0 ? textReply("done anyway") : toolCallsReply({ name: "fx__erase", arguments: { record: "all" } }),
    );
    const session = await signInAs(team.dev.baseUrl, "alice");
    const client = await connectMcpClient("v2-2025", `${team.dev.baseUrl}/mcp`, { headers: bearer(session) });
    try {
      expect(resultText(await client.callTool(EXPERT, { query: "clean up" }))).toContain("done anyway");
    } finally {
      await client.close();
      team.fake.reset(sixCallsThenAnswer);
    }
    const page = await alice.newPage();
    await page.setViewportSize({ width: 1280, height: 800 });
    const refused = page.getByText("⚠ 1 refused");
    for (let attempt = 0; attempt < 40 && (await refused.count()) < 1; attempt += 1) {
      await page.goto(`${team.dev.baseUrl}/admin/runs`);
    }
    await expect(refused.isVisible()).resolves.toBe(true);
    await page.getByLabel("User (login or id)").fill("alice");
    await page.getByRole("button", { name: "Filter" }).click();
    await page.waitForURL((url) => url.searchParams.get("user") === "alice");
    await expect(page.getByRole("link", { name: /^Run [0-9a-f-]{36}$/ }).count()).resolves.toBe(2);
    await expect(refused.isVisible()).resolves.toBe(true);
    await saveScreenshot(page, "run-list-refused");
  });
});
