import type { Browser, BrowserContext } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFixtureServers, type RunningFixtureServers } from "../../fixtures/fixture-servers";
import { taggedBase } from "../../fixtures/fixture-stats-client";
import { loadCatalog } from "../harness/catalog-admin";
import { chromiumSkipReason, sharedChromium, loopbackOnlyContext, saveScreenshot } from "../harness/chromium-browser";
import { type ChatRequest, type ScriptedReply, textReply, toolCallsReply, toolResultMessages } from "../harness/fake-openai-server";
import { connectMcpClient, resultText } from "../harness/mcp-clients";
import { bearer, signInAs } from "../harness/oauth-sign-in";
import { startDevTeamServer, type DevTeamServer } from "../oauth/dev-team-server";

const EXPERT = "timed_notes";
const INJECTED = "<img src=x onerror=alert(1)>";
const SLEEP_MS = 400;
/** A tool name of several words: it may break only at the namespace separator, never at its own `_`. */
const LONG_TOOL = "delete_everything_in_the_archive_for_good";

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
  let releaseHung: () => void = () => undefined;

  beforeAll(async () => {
    [team, fixtures, browser] = await Promise.all([startDevTeamServer({ ADMIN_USERS: "alice" }), startFixtureServers(), sharedChromium()]);
    fxBase = taggedBase(fixtures.urls.echo, "waterfall");
    await loadCatalog(
      team.dev.baseUrl,
      {
        skills: {
          default: {
            servers: { fx: { url: `${fxBase}/mcp`, transport: "streamable-http" } },
            tool_policy: { requires_approval: ["fx__erase"] },
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
              {
                name: "hung_notes_with_a_rather_long_expert_name_for_wrapping",
                description: "Its model never answers.",
                internal_tools: { fx: ["echo"] },
                provider: "openai-compatible",
                base_url: team.fake.baseURL,
                model: "fake-hang",
                budget: { max_steps: 2, timeout_ms: 1_500 },
              },
              {
                name: "archivist",
                description: "Never called: its one tool's long name is what the skills page must not cut mid-word.",
                internal_tools: { fx: [LONG_TOOL] },
                provider: "openai-compatible",
                base_url: team.fake.baseURL,
                model: "fake-archive",
                budget: { max_steps: 2, timeout_ms: 5_000 },
              },
              {
                name: "cleaner",
                description: "Erases a record once approved.",
                internal_tools: { fx: ["erase"] },
                provider: "openai-compatible",
                base_url: team.fake.baseURL,
                model: "fake-clean",
                budget: { max_steps: 3, timeout_ms: 20_000 },
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
    releaseHung();
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

  it("shows a hung model call with its endpoint and wait, links a paused run and its resume both ways, and the skills and overview columns", async () => {
    const hung = new Promise<void>((resolve) => {
      releaseHung = resolve;
    });
    team.fake.reset(async (request) => {
      if (request.model === "fake-hang") {
        await hung;
        return textReply("too late");
      }
      if (request.model === "fake-clean")
        return toolResultMessages(request).length > 0 ? textReply("erased it") : toolCallsReply({ name: "fx__erase", arguments: { record: "r9" } });
      return sixCallsThenAnswer(request);
    });
    const session = await signInAs(team.dev.baseUrl, "alice");
    const client = await connectMcpClient("v2-2025", `${team.dev.baseUrl}/mcp`, { headers: bearer(session) });
    let thread = "";
    try {
      await client.callTool("hung_notes_with_a_rather_long_expert_name_for_wrapping", { query: "anyone there?" });
      const asked = await client.callTool("cleaner", { query: "Erase r9" });
      thread = (asked._meta?.["slipsnisse.dev/question"] as { thread: string } | undefined)?.thread ?? "";
      expect(resultText(await client.callTool("cleaner", { query: "Erase r9", thread, approve: true }))).toContain("erased it");
    } finally {
      releaseHung();
      await client.close();
      team.fake.reset(sixCallsThenAnswer);
    }

    const page = await alice.newPage();
    await page.setViewportSize({ width: 1280, height: 800 });
    const listed = page.getByRole("link", { name: /^Run [0-9a-f-]{36}$/ });
    for (let attempt = 0; attempt < 40 && (await listed.count()) < 5; attempt += 1) {
      await page.goto(`${team.dev.baseUrl}/admin/runs`);
    }
    expect(await listed.count()).toBe(5);
    await expect(page.getByText("budget_exhausted · time (timeout_ms)").isVisible()).resolves.toBe(true);

    // The hung run: the pending model call, its endpoint host and wait, as a bar to the run's end.
    await page.goto(`${team.dev.baseUrl}/admin/runs?expert=hung_notes_with_a_rather_long_expert_name_for_wrapping`);
    await listed.first().click();
    await page.waitForURL(/\/admin\/runs\/[0-9a-f-]{36}$/);
    const host = new URL(team.fake.baseURL).host;
    await expect(
      page.getByText(new RegExp(`No answer: waited \\d+ ms on openai-compatible fake-hang at ${host.replaceAll(".", "\\.")}, until the run ended`)).isVisible(),
    ).resolves.toBe(true);
    const pending = await page.locator("rect.wf-pending").evaluate((rect) => rect.getBoundingClientRect().width);
    expect(pending).toBeGreaterThan(0);
    await expect(page.getByText("No steps recorded").count()).resolves.toBe(0);
    await saveScreenshot(page, "run-hung-model");

    // The paused run links to the run that resumed it, and back; the approval step names who decided.
    await page.goto(`${team.dev.baseUrl}/admin/runs?expert=cleaner`);
    const [resumedId, pausedId] = await listed.evaluateAll((links) => links.map((link) => link.getAttribute("aria-label")?.slice(4) ?? ""));
    await page.goto(`${team.dev.baseUrl}/admin/runs/${pausedId}`);
    const threadRuns = page.getByRole("list", { name: "Runs of this thread" });
    await expect(page.getByText(thread).isVisible()).resolves.toBe(true);
    await threadRuns.getByRole("link", { name: `Run ${resumedId}` }).click();
    await page.waitForURL((url) => url.pathname === `/admin/runs/${resumedId}`);
    await expect(page.getByText(/fx__erase: approved by the orchestrator at \d{4}-\d\d-\d\d/).isVisible()).resolves.toBe(true);
    await expect(threadRuns.getByRole("link", { name: `Run ${pausedId}` }).isVisible()).resolves.toBe(true);
    await saveScreenshot(page, "run-resumed-thread");

    // Skills: approvals beside allowed/blocked; a long name is never cut mid-word (no `delete_ everything`).
    await page.setViewportSize({ width: 900, height: 800 });
    await page.goto(`${team.dev.baseUrl}/admin/skills`);
    await expect(page.getByText(/needs approval: fx__erase, and every tool its server marks destructive/).isVisible()).resolves.toBe(true);
    for (const name of [page.locator("code.name", { hasText: "hung_" }), page.locator("span.name", { hasText: LONG_TOOL })]) {
      expect(await name.evaluate((element) => element.getClientRects().length)).toBe(1);
      expect(await name.innerText()).not.toContain("\n");
    }
    await saveScreenshot(page, "skills-approval-and-wrapping");

    await page.setViewportSize({ width: 1280, height: 800 });
    await page.goto(`${team.dev.baseUrl}/admin`);
    for (const column of ["Errors", "Budget stops", "Cancels", "Pauses"])
      await expect(page.getByRole("columnheader", { name: column, exact: true }).isVisible()).resolves.toBe(true);
    await saveScreenshot(page, "overview-outcome-columns");
  });

  it("shows a newcomer a step-budget stop unmarked, a resumed pause as decided, pauses on their own, the default endpoint, evals, unset limits, and a member's own header", async () => {
    // The model asks for its tool on every step, the last (which offers none, its budget spent) too.
    team.fake.reset((request) =>
      request.model === "fake-cheap" ? toolCallsReply({ name: "fx__echo", arguments: { text: "again" } }) : sixCallsThenAnswer(request),
    );
    const session = await signInAs(team.dev.baseUrl, "alice");
    const client = await connectMcpClient("v2-2025", `${team.dev.baseUrl}/mcp`, { headers: bearer(session) });
    try {
      await client.callTool(EXPERT, { query: "loop forever" });
    } finally {
      await client.close();
      team.fake.reset(sixCallsThenAnswer);
    }
    const page = await alice.newPage();
    await page.setViewportSize({ width: 1280, height: 800 });
    const stopped = page.getByRole("row").filter({ hasText: "budget_exhausted · steps (max_steps)" });
    for (let attempt = 0; attempt < 40 && (await stopped.count()) < 1; attempt += 1) {
      await page.goto(`${team.dev.baseUrl}/admin/runs?expert=${EXPERT}`);
    }
    await expect(stopped.isVisible()).resolves.toBe(true);
    // The call on the tool-less last step is a budget stop, not a refused (possibly injected) tool; the real refusal keeps its mark.
    expect(await stopped.getByText(/refused/).count()).toBe(0);
    expect(await page.getByText("⚠ 1 refused").count()).toBe(1);
    await saveScreenshot(page, "run-list-budget-stop");

    // The paused run, approved since: its waiting call shows the decision, in no error box, its state not cut.
    await page.setViewportSize({ width: 700, height: 800 });
    await page.goto(`${team.dev.baseUrl}/admin/runs?expert=cleaner`);
    const pausedId = await page
      .getByRole("row")
      .filter({ hasText: "paused" })
      .getByRole("link", { name: /^Run [0-9a-f-]{36}$/ })
      .evaluate((link) => link.getAttribute("aria-label")?.slice(4) ?? "");
    await page.goto(`${team.dev.baseUrl}/admin/runs/${pausedId}`);
    await expect(page.getByRole("status").filter({ hasText: "This run paused and was approved by the orchestrator" }).textContent()).resolves.toMatch(
      /the run that resumed it ended ok/,
    );
    expect(await page.locator(".error").count()).toBe(0);
    const label = page.locator(".wf-calls .wf-label", { hasText: "fx__erase" });
    await expect(label.innerText()).resolves.toMatch(/^fx__erase\s+approved$/);
    const fit = await label.evaluate((element) => {
      const box = element.getBoundingClientRect();
      const badge = element.querySelector("span")?.getBoundingClientRect();
      return { overflow: element.scrollWidth - element.clientWidth, badgeRight: badge?.right ?? Infinity, right: box.right, badgeWidth: badge?.width ?? 0 };
    });
    expect(fit.overflow).toBeLessThanOrEqual(0);
    expect(fit.badgeWidth).toBeGreaterThan(0);
    expect(fit.badgeRight).toBeLessThanOrEqual(fit.right + 0.5);
    await expect(page.getByText(/Approved by the orchestrator at \d{4}-\d\d-\d\d .*the run that resumed it ran the call/).isVisible()).resolves.toBe(true);
    await saveScreenshot(page, "run-paused-then-approved");

    // The overview: a pause is a category of its own, neutral, and not counted as "not ok".
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.goto(`${team.dev.baseUrl}/admin`);
    const today = page.locator(".cards").first();
    const paused = today.locator(".card", { hasText: "paused" });
    await expect(paused.locator(".n").textContent()).resolves.toBe("1");
    const colour = (selector: string) => page.evaluate<string>(`getComputedStyle(document.querySelector(${JSON.stringify(selector)})).color`);
    expect(await colour(".card.pauses .n")).toBe(await colour("body"));
    // Not ok: the hung run's timeout and the step-budget stop; neither the pause nor the ok runs.
    await expect(today.locator(".card", { hasText: "not ok" }).locator(".n").textContent()).resolves.toBe("2");
    await saveScreenshot(page, "overview-pauses");

    // Skills: the default skill's endpoint is /mcp; no limits set says so and how; each expert links its evals.
    await page.goto(`${team.dev.baseUrl}/admin/skills`);
    await expect(page.getByText(/^Endpoint \/mcp ·/).isVisible()).resolves.toBe(true);
    expect(await page.getByText("/s/default/mcp").count()).toBe(0);
    await expect(page.getByText(/No limits set: .*skills\.default\.limits/).isVisible()).resolves.toBe(true);
    expect(await page.getByRole("columnheader", { name: "In flight" }).count()).toBe(0);
    await saveScreenshot(page, "skills-endpoint-limits-evals");
    // In view beside the expert's name, not in a last column scrolled off by a long name.
    const evalsLink = page.getByRole("link", { name: "Evals of cleaner" });
    const linkBox = await evalsLink.boundingBox();
    expect((linkBox?.x ?? Infinity) + (linkBox?.width ?? 0)).toBeLessThanOrEqual(1280);
    await evalsLink.click();
    await page.getByRole("heading", { name: "Evals: default / cleaner" }).waitFor();

    // Evals from the nav and from the catalog pages.
    await page.goto(`${team.dev.baseUrl}/admin/catalog`);
    await page.getByRole("link", { name: "Evals of default" }).click();
    await page.getByRole("heading", { name: "Evals", exact: true }).waitFor();
    await page.getByRole("navigation", { name: "Dashboard" }).getByRole("link", { name: "Evals" }).click();
    await page.waitForURL((url) => url.pathname === "/admin/evals");
    await page.getByRole("link", { name: "Evals of default / archivist" }).click();
    await page.getByRole("heading", { name: "Evals: default / archivist" }).waitFor();
    await saveScreenshot(page, "evals-from-nav");

    // A member's own page (Connections, where connect links lead, and where a member's sign-in lands) is not headed as the admin dashboard.
    const bob = await loopbackOnlyContext(browser);
    try {
      const member = await bob.newPage();
      await member.goto(`${team.dev.baseUrl}/admin`);
      await member.getByRole("link", { name: "Sign in as bob" }).click();
      await member.getByRole("heading", { name: "Connections", exact: true }).waitFor();
      expect(new URL(member.url()).pathname).toBe("/connect");
      await member.goto(`${team.dev.baseUrl}/admin`);
      await member.getByRole("heading", { name: "Admins only" }).waitFor();
      await member.goto(`${team.dev.baseUrl}/connect`);
      await member.getByRole("heading", { name: "Connections", exact: true }).waitFor();
      await expect(member.locator("header .brand").textContent()).resolves.toBe("Slipsnisse");
      expect(await member.title()).not.toContain("admin");
      await saveScreenshot(member, "member-connections-header");
    } finally {
      await bob.close();
    }
  });
});
