import { Hono } from "hono";
import { html } from "hono/html";
import { z } from "zod";
import { indexedRun, listIndexedRuns, OUTCOMES, runFilterSchema, type RunSummary, threadRuns } from "../../admin/run-index-query";
import { sessionName, sessionStub } from "../../experts/session/session-name";
import type { StepRecord } from "../../experts/core/run-types";
import { dashboardMessage, formatTime, renderDashboardPage } from "../dashboard-layout";
import { frameOf, type DashboardContext, type DashboardEnv } from "../dashboard-context";
import { type CallResolution, outcomeBadge, runWaterfall } from "../../experts/trace/run-waterfall";

export { outcomeBadge };

const PAGE_SIZE = 50;
const WINDOWS = { "1h": 3_600_000, "24h": 86_400_000, "7d": 7 * 86_400_000, "30d": 30 * 86_400_000 } as const;
const windowSchema = z.enum(["1h", "24h", "7d", "30d", "all"]).catch("7d");
const runIdSchema = z.uuid();

/** The tenant's runs (the run index) with filters and paging, and one run's trace step by step. */
export function runPages(): Hono<DashboardEnv> {
  const routes = new Hono<DashboardEnv>();

  routes.get("/runs", async (c) => {
    const since = windowSchema.parse(c.req.query("since") ?? "7d");
    const raw: Record<string, string> = {};
    for (const key of ["skill", "expert", "user", "outcome", "cursor"] as const) {
      const value = c.req.query(key);
      if (value !== undefined && value !== "") raw[key] = value;
    }
    const parsed = runFilterSchema.safeParse({ ...raw, limit: String(PAGE_SIZE), ...(since === "all" ? {} : { from: String(Date.now() - WINDOWS[since]) }) });
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      return dashboardMessage(
        400,
        "Filter not understood",
        `${String(issue?.path[0] ?? "filter")}: ${issue?.message ?? "unreadable"}. Clear the filters and try again.`,
        frameOf(c),
      );
    }
    const page = await listIndexedRuns(c.env.DB, parsed.data);
    const keep = new URLSearchParams({ ...raw, since });
    keep.delete("cursor");
    const next = page.next_cursor === null ? undefined : `/admin/runs?${new URLSearchParams({ ...Object.fromEntries(keep), cursor: page.next_cursor })}`;
    const body = html`<h1>Runs</h1>
<form method="get" action="/admin/runs" class="filters" aria-label="Filter runs">
${textFilter("skill", "Skill", raw.skill)} ${textFilter("expert", "Expert", raw.expert)} ${textFilter("user", "User (login or id)", raw.user)}
<label for="f-outcome">Outcome</label> <select id="f-outcome" name="outcome"><option value="">any</option>${OUTCOMES.map((outcome) => html`<option${raw.outcome === outcome ? html` selected` : ""}>${outcome}</option>`)}</select>
<label for="f-since">Started</label> <select id="f-since" name="since">${(["1h", "24h", "7d", "30d", "all"] as const).map((value) => html`<option value="${value}"${since === value ? html` selected` : ""}>${value === "all" ? "any time" : `last ${value}`}</option>`)}</select>
<button type="submit">Filter</button> <a href="/admin/runs">clear</a></form>
${page.runs.length === 0 ? html`<p class="muted">No finished runs match.</p>` : runTable(page.runs)}
${next ? html`<p><a href="${next}" rel="next">Older runs →</a></p>` : ""}`;
    return renderDashboardPage({ title: "Runs", current: "runs", ...frameOf(c) }, body);
  });

  routes.get("/runs/:runId", async (c) => {
    const runId = runIdSchema.safeParse(c.req.param("runId"));
    const summary = runId.success ? await indexedRun(c.env.DB, runId.data) : null;
    if (!summary)
      return dashboardMessage(404, "No such run", "No finished run with this id is in the run index. A run is indexed once it has ended.", frameOf(c));
    const stub = sessionStub(c.env, summary.skill, summary.user.id);
    const [run, steps, thread] = await Promise.all([
      stub.run(summary.id),
      stub.steps(summary.id),
      summary.threadId === null ? [] : threadRuns(c.env.DB, summary.threadId),
    ]);
    // A paused run is over once the next run of its thread resumed it: its waiting calls show how they were decided there.
    const resumedBy = summary.outcome === "paused" ? thread.find((other) => other.startedAt >= summary.startedAt && other.id !== summary.id) : undefined;
    const resumed = resumedBy === undefined ? undefined : { run: resumedBy, resolved: resolutions(await stub.steps(resumedBy.id)) };
    return renderDashboardPage({ title: `Run ${summary.id.slice(0, 8)}`, current: "runs", ...frameOf(c) }, traceBody(c, summary, run, steps, thread, resumed));
  });

  return routes;
}

function textFilter(name: string, label: string, value: string | undefined) {
  return html`<label for="f-${name}">${label}</label> <input id="f-${name}" name="${name}" value="${value ?? ""}" size="12">`;
}

/** Each budget as the catalog names its limit, so the admin knows which knob stopped the run. */
const BUDGET_LIMITS: Record<string, string> = {
  steps: "steps (max_steps)",
  timeout: "time (timeout_ms)",
  tool_calls: "tool calls (max_tool_calls)",
  output_tokens: "tokens (max_output_tokens)",
};

/** A run's outcome with which budget stopped it, and a mark when it had calls refused (forbidden or injected tool names). */
export function runOutcome(run: Pick<RunSummary, "outcome" | "budgetExhausted" | "refusedCalls">) {
  const budget = run.budgetExhausted === null ? "" : html` <span class="warn">· ${BUDGET_LIMITS[run.budgetExhausted] ?? run.budgetExhausted}</span>`;
  const refused =
    run.refusedCalls > 0
      ? html` <span class="bad refused" title="The model called a tool this expert does not have: blocked, not whitelisted, or named by text it read (a possible injection)">⚠ ${run.refusedCalls} refused</span>`
      : "";
  return html`${outcomeBadge(run.outcome)}${budget}${refused}`;
}

export function runTable(runs: readonly RunSummary[]) {
  return html`<div class="table-wrap"><table><thead><tr><th scope="col">Started</th><th scope="col">Skill / expert</th><th scope="col">User</th><th scope="col">Outcome</th><th scope="col">Steps</th><th scope="col">Tokens in / out</th><th scope="col">Tool calls</th><th scope="col">Latency</th><th scope="col">Cost</th></tr></thead><tbody>
${runs.map(
  (
    run,
  ) => html`<tr><td><a href="/admin/runs/${run.id}" aria-label="Run ${run.id}">${formatTime(run.startedAt)}</a></td><td>${run.skill} / <code>${run.expert}</code></td><td>${run.user.login ?? run.user.id}</td>
<td>${runOutcome(run)}</td><td>${run.steps}</td><td>${run.inputTokens} / ${run.outputTokens}</td><td>${run.toolCalls}${run.toolErrors > 0 ? html` <span class="bad">(${run.toolErrors} failed)</span>` : ""}</td><td>${run.elapsedMs} ms</td><td>${formatCost(run.cost)}</td></tr>`,
)}
</tbody></table></div>`;
}

export function formatCost(cost: number | null): string {
  return cost === null ? "—" : `$${cost < 0.01 ? cost.toFixed(6) : cost.toFixed(2)}`;
}

type StoredRun = Awaited<ReturnType<ReturnType<typeof sessionStub>["run"]>>;

type ThreadRun = Pick<RunSummary, "id" | "outcome" | "startedAt">;

/** The run that resumed a paused one, and how it decided the calls the pause waited on. */
interface Resumed {
  run: ThreadRun;
  resolved: ReadonlyMap<string, CallResolution>;
}

/** Each call decided when a run resumed (the same tool call id as in the paused run), by id. */
function resolutions(steps: readonly StepRecord[]): Map<string, CallResolution> {
  return new Map(
    steps.flatMap((step) =>
      step.toolCalls.flatMap((call) =>
        call.decision ? [[call.toolCallId, { ...call.decision, ...(call.startedAt === undefined ? {} : { at: call.startedAt }) }] as const] : [],
      ),
    ),
  );
}

/** A paused run that was resumed says so, with what was decided and how the run that resumed it ended. */
function resumedNotice(resumed: Resumed | undefined) {
  if (!resumed) return "";
  const decisions = [...new Set([...resumed.resolved.values()].map((resolution) => `${resolution.outcome.replaceAll("_", " ")} by the ${resolution.by}`))];
  return html`<p class="notice resumed" role="status">This run paused${decisions.length > 0 ? html` and was ${decisions.join(", ")}` : ""}; <a href="/admin/runs/${resumed.run.id}" aria-label="Run ${resumed.run.id}">the run that resumed it</a> ended ${outcomeBadge(resumed.run.outcome)}.</p>`;
}

function traceBody(c: DashboardContext, summary: RunSummary, run: StoredRun, steps: readonly StepRecord[], thread: readonly ThreadRun[], resumed?: Resumed) {
  return html`<h1>Run of <code>${summary.expert}</code> ${runOutcome(summary)}</h1>
${resumedNotice(resumed)}
<p><label for="run-id">Run id</label> <input id="run-id" readonly value="${summary.id}" size="38" aria-describedby="run-id-help"> <span id="run-id-help" class="muted">select to copy</span></p>
<dl class="facts">
<dt>Skill</dt><dd>${summary.skill}${summary.catalogVersion === null ? "" : html` (catalog v${summary.catalogVersion})`}</dd>
<dt>User</dt><dd>${summary.user.login ?? summary.user.id} <span class="muted">${summary.user.id}</span></dd>
<dt>Model</dt><dd>${summary.provider} <code>${summary.model}</code></dd>
<dt>Started</dt><dd>${formatTime(summary.startedAt)}, ${summary.elapsedMs} ms</dd>
<dt>Tokens</dt><dd>${summary.inputTokens} in, ${summary.outputTokens} out · cost ${formatCost(summary.cost)}</dd>
<dt>Trace id</dt><dd><code>${summary.traceId}</code></dd>
<dt>Session</dt><dd><code>${sessionName(c.env.TENANT, summary.skill, summary.user.id)}</code></dd>
${summary.threadId === null ? "" : html`<dt>Thread</dt><dd><code>${summary.threadId}</code>${threadList(summary.id, thread)}</dd>`}
</dl>
${
  run === null
    ? html`<p class="error">The session no longer holds this run's trace (it keeps a bounded history).</p>`
    : html`
<h2>Arguments</h2><pre>${run.args ?? ""}</pre>
${run.error ? html`<h2>Error</h2><p class="error">${run.error}</p>` : ""}
${run.notes.length > 0 ? html`<h2>Notes</h2><ul>${run.notes.map((note) => html`<li>${note}</li>`)}</ul>` : ""}`
}
<h2>Steps</h2>
${steps.length === 0 ? html`<p class="muted">No steps recorded.</p>` : runWaterfall(steps, summary.startedAt, summary.endedAt, resumed ? { resolved: resumed.resolved } : {})}
${run?.answer ? html`<h2>Answer</h2><pre>${run.answer}</pre>` : ""}
<p><a href="/admin/runs">← All runs</a></p>`;
}

/** The thread's runs in order, this one marked: a paused run links to the run that resumed it, and back. */
function threadList(current: string, thread: readonly ThreadRun[]) {
  if (thread.length < 2) return "";
  return html`<ol class="thread" aria-label="Runs of this thread">${thread.map(
    (run) =>
      html`<li>${run.id === current ? html`<strong aria-current="page">this run</strong>` : html`<a href="/admin/runs/${run.id}" aria-label="Run ${run.id}">${formatTime(run.startedAt)}</a>`} ${outcomeBadge(run.outcome)}</li>`,
  )}</ol>`;
}
