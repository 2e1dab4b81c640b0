import { env } from "cloudflare:test";
import { describe, expect, inject, it } from "vitest";
import type { UserProps } from "../../src/auth/user-props";
import type { ExpertCallRequest } from "../../src/experts/core/call-types";
import { sessionStub } from "../../src/experts/session/session-name";
import { taggedBase } from "../fixtures/fixture-stats-client";
import { indexRow, writeIndexRows } from "../admin/run-index-rows";
import { uniqueSkill } from "../support/catalog-test-data";
import { expertOf } from "../support/workers/session-helpers";
import { useCatalogWithScriptedModels } from "../support/workers/scripted-model";
import { flushRunIndex } from "../support/workers/run-index-flush";
import { dashboardFetch } from "./dashboard-test-client";

const fixtures = inject("fixtureServers");
const echo = taggedBase(fixtures.echo, "run-outcomes");
const skill = "run-outcome-tests";
const fay: UserProps = { userId: "u-fay-7f3a", login: "fay", role: "member" };
const session = () => sessionStub(env, skill, fay.userId);
const NO_AUTH = { AUTH: "none", ENVIRONMENT: "test" };

async function page(path: string): Promise<string> {
  const response = await dashboardFetch(path, {}, NO_AUTH);
  expect(response.status, path).toBe(200);
  return response.text();
}

/** The outcome cell of each listed run, markup removed. */
function outcomes(text: string): string[] {
  return [...text.matchAll(/<td>(<span class="(?:ok|bad|warn)">[\s\S]*?)<\/td>/g)].map((match) => (match[1] ?? "").replace(/<[^>]+>/g, "").trim());
}

describe("run outcomes on the run list and run page", () => {
  const models = useCatalogWithScriptedModels({
    skills: {
      [skill]: {
        servers: { echo: { url: `${echo}/mcp`, transport: "streamable-http" } },
        tool_policy: { blocked: ["echo__wipe*"], requires_approval: ["echo__erase"] },
        experts: [
          expertOf("lister", { echo: ["echo"] }, { max_steps: 3 }),
          expertOf("sleeper", { echo: ["sleep"] }, { max_steps: 3, timeout_ms: 1_000 }),
          expertOf("hanger", { echo: ["echo"] }, { max_steps: 3, timeout_ms: 1_000 }),
          expertOf("cleaner", { echo: ["erase"] }, { max_steps: 3 }),
        ],
      },
    },
  });
  const call = (expert: string, extra: Partial<ExpertCallRequest> = {}): ExpertCallRequest => ({
    runId: crypto.randomUUID(),
    skill,
    expert,
    args: { query: "go" },
    user: fay,
    ...extra,
  });

  it("marks a run whose model called a tool it does not have (blocked, or named by injected text), and says which budget stopped a run", async () => {
    // The model, as if steered by text it read, calls a blocked tool and then a made-up one.
    models.play([
      {
        calls: [
          { name: "echo__erase", input: { record: "all" } },
          { name: "<script>x</script>", input: {} },
        ],
      },
      { text: "Nothing to do." },
    ]);
    const injected = await session().callExpert(call("lister"));
    expect(injected.outcome).toBe("ok");
    models.play([{ calls: [{ name: "echo__sleep", input: { ms: 5_000 } }] }, { text: "never" }]);
    const slow = await session().callExpert(call("sleeper"));
    expect(slow.outcome).toBe("budget_exhausted");
    await flushRunIndex(session());

    const list = await page(`/admin/runs?skill=${skill}`);
    // Newest first: the timed-out run, then the one with refused calls (no longer a plain "ok").
    expect(outcomes(list)).toEqual(["budget_exhausted · time (timeout_ms)", "ok ⚠ 2 refused"]);
    expect(list).not.toContain("<script>x</script>");
    const trace = await page(`/admin/runs/${slow.runId}`);
    expect(trace).toMatch(
      /<h1>Run of <code>sleeper<\/code> <span class="warn">budget_exhausted<\/span> <span class="warn">· time \(timeout_ms\)<\/span><\/h1>/,
    );
    const injectedPage = await page(`/admin/runs/${injected.runId}`);
    expect(injectedPage).toContain("⚠ 2 refused");
    // The made-up tool name is text in the waterfall's label and in its bar's accessible name.
    expect(injectedPage).toContain('aria-label="Tool call &lt;script&gt;x&lt;/script&gt;: starts at');
    expect(injectedPage).not.toContain("<script>x</script>");
  });

  it("shows the model call a run never got an answer to: its endpoint (host only), how long it waited, instead of no steps", async () => {
    models.play([() => new Promise(() => undefined)]);
    const hung = await session().callExpert(call("hanger"));
    expect(hung.outcome).toBe("budget_exhausted");
    await flushRunIndex(session());
    const trace = await page(`/admin/runs/${hung.runId}`);
    expect(trace).not.toContain("No steps recorded");
    const waited = /No answer: waited (\d+) ms on openai-compatible <code>([^<]+)<\/code> at <code>127\.0\.0\.1:9<\/code>, until the run ended\./.exec(trace);
    expect(waited, trace.slice(trace.indexOf("<h2>Steps"))).not.toBeNull();
    expect(Number(waited?.[1])).toBeGreaterThanOrEqual(900);
    expect(trace).toMatch(/<rect class="wf-bar wf-pending" data-start-ms="\d+" x="[\d.]+%" y="1" width="[\d.]+%"/);
    // Only the host: not the base URL's path.
    expect(trace).not.toContain("127.0.0.1:9/v1");
  });

  it("links a paused run and the run that resumed it both ways, with the thread, and says who decided the approval and when", async () => {
    models.play([{ calls: [{ name: "echo__erase", input: { record: "r1" } }] }]);
    const paused = await session().callExpert(call("cleaner"));
    expect(paused.outcome).toBe("paused");
    models.play([{ text: "Erased r1." }]);
    const resumed = await session().callExpert(call("cleaner", { args: {}, thread: paused.thread, approve: true }));
    expect(resumed.outcome).toBe("ok");
    await flushRunIndex(session());

    const links = (text: string) => [...text.matchAll(/<ol class="thread" aria-label="Runs of this thread">([\s\S]*?)<\/ol>/g)].map((match) => match[1] ?? "");
    const pausedPage = await page(`/admin/runs/${paused.runId}`);
    const resumedPage = await page(`/admin/runs/${resumed.runId}`);
    expect(pausedPage).toContain(`<dt>Thread</dt><dd><code>${paused.thread}</code>`);
    expect(links(pausedPage)[0]).toMatch(new RegExp(`this run</strong> <span class="warn">paused</span></li><li><a href="/admin/runs/${resumed.runId}"`));
    expect(links(resumedPage)[0]).toMatch(
      new RegExp(
        `<a href="/admin/runs/${paused.runId}" aria-label="Run ${paused.runId}">[^<]+</a> <span class="warn">paused</span></li><li><strong aria-current="page">this run`,
      ),
    );
    // The approval step is no model call with 0 tokens: it names the decision, who made it and when.
    expect(resumedPage).toMatch(
      /No model call: the decisions this run resumed with\.<\/p><ul><li><code>echo__erase<\/code>: approved by the orchestrator at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC<\/li>/,
    );
    expect(resumedPage).not.toContain("Model  · 0 tokens");
  });

  it("names each budget as the catalog's limit, on rows the index holds", async () => {
    const name = uniqueSkill("budgets");
    const now = Date.now();
    await writeIndexRows(
      (["steps", "tool_calls", "output_tokens"] as const).map((budget, index) =>
        indexRow({ skill: name, startedAt: now - index, outcome: "budget_exhausted", budgetExhausted: budget }),
      ),
    );
    expect(outcomes(await page(`/admin/runs?skill=${name}`))).toEqual([
      "budget_exhausted · steps (max_steps)",
      "budget_exhausted · tool calls (max_tool_calls)",
      "budget_exhausted · tokens (max_output_tokens)",
    ]);
  });

  it("filters the run list by the login it shows, as well as by the user id", async () => {
    const name = uniqueSkill("by-login");
    const now = Date.now();
    const rows = [
      indexRow({ skill: name, startedAt: now, userId: "u-9c1e", userLogin: "gus" }),
      indexRow({ skill: name, startedAt: now - 1, userId: "u-2b7d", userLogin: "hal" }),
    ];
    await writeIndexRows(rows);
    const ids = (text: string) => [...text.matchAll(/aria-label="Run ([0-9a-f-]{36})"/g)].map((match) => match[1]);
    expect(ids(await page(`/admin/runs?skill=${name}&user=gus`))).toEqual([rows[0]?.runId]);
    expect(ids(await page(`/admin/runs?skill=${name}&user=u-2b7d`))).toEqual([rows[1]?.runId]);
    expect(ids(await page(`/admin/runs?skill=${name}&user=nobody`))).toEqual([]);
  });
});
