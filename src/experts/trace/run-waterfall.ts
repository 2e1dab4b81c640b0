import { html } from "hono/html";
import type { StepRecord, ToolCallRecord, UserDecision } from "../core/run-types";

/** What a bar shows: the model's answer wait, a tool call by how it ended, or an approval/pause wait. */
export type BarKind = "setup" | "model" | "retried" | "pending" | "tool" | "failed" | "approval";

export interface WaterfallBar {
  kind: BarKind;
  /** Offset and width on the run's time axis, percent of the axis. */
  left: number;
  width: number;
  startMs: number;
  durationMs: number;
}

export interface WaterfallRow {
  step: StepRecord;
  bar: WaterfallBar;
  calls: Array<{ call: ToolCallRecord; bar: WaterfallBar }>;
}

/**
 * The waterfall's own rules, shared by every page that draws one (the dashboard's run page, the
 * MCP App's run view): they read the page's `--soft` and `--muted` colours.
 */
export const WATERFALL_STYLE = `ol.wf,ol.wf-calls{list-style:none;margin:0;padding:0}ol.wf-calls summary{padding-left:1rem}.wf .wf-row{display:grid;grid-template-columns:minmax(10rem,16rem) 1fr 4.5rem;gap:.5rem;align-items:center;padding:.05rem 0;border-bottom:1px solid var(--soft)}.wf summary{cursor:pointer}
.wf-label{overflow:hidden;text-overflow:ellipsis;white-space:nowrap}.wf-dur{text-align:right;color:var(--muted);font-size:.85rem}svg.wf-track{display:block;background:var(--soft)}.wf details[open]>summary{background:var(--soft)}.wf-detail,.wf .call{margin:.25rem 0 .5rem 1rem}.wf-legend span{margin-right:.6rem;white-space:nowrap}
.wf-label{display:flex;flex-wrap:wrap;align-items:baseline;column-gap:.3rem;white-space:normal}.wf-label>code{max-width:100%;overflow:hidden;text-overflow:ellipsis;white-space:nowrap}.wf p.waiting{color:var(--muted)}`;

/** A time as the dashboard and the run view show it: UTC, to the second. */
export function formatTime(ms: number): string {
  return new Date(ms)
    .toISOString()
    .replace("T", " ")
    .replace(/\.\d+Z$/, " UTC");
}

/** A bar narrower than this would vanish: a 0 ms call is still drawn as a sliver. */
const MIN_WIDTH_PERCENT = 0.4;

const FILL: Record<BarKind, string> = {
  setup: "#8c959f",
  model: "#0b5cad",
  retried: "#9a6700",
  pending: "#bc4c00",
  tool: "#1a7f37",
  failed: "#b42318",
  approval: "#8250df",
};

const FAILED_STATUSES: ReadonlySet<ToolCallRecord["status"]> = new Set(["error", "refused", "withheld", "cancelled", "budget_stop"]);
const WAITING_STATUSES: ReadonlySet<ToolCallRecord["status"]> = new Set(["declined", "awaiting_approval"]);

function callKind(call: ToolCallRecord): BarKind {
  if (call.decision || WAITING_STATUSES.has(call.status)) return "approval";
  return FAILED_STATUSES.has(call.status) ? "failed" : "tool";
}

interface Span {
  start: number;
  end: number;
}

/**
 * Each step and each of its tool calls on one time axis, from the run's start to its end, from
 * the start times the trace records. Steps stored before start times were kept are laid out one
 * after another from their durations (model wait, then the step's calls), so an old trace still
 * reads in order. A call left waiting for approval (a paused run) runs to the run's end.
 */
export function waterfallRows(
  steps: readonly StepRecord[],
  runStart: number,
  runEnd: number,
): { rows: WaterfallRow[]; totalMs: number; setup: WaterfallBar | null } {
  let cursor = runStart;
  const spans = steps.map((step) => {
    const modelStart = step.model?.startedAt ?? cursor;
    const model: Span = { start: modelStart, end: modelStart + (step.model?.latencyMs ?? 0) };
    let callCursor = model.end;
    const calls = step.toolCalls.map((call) => {
      const start = call.startedAt ?? callCursor;
      const end = call.status === "awaiting_approval" ? Math.max(runEnd, start + call.elapsedMs) : start + call.elapsedMs;
      callCursor = Math.max(callCursor, end);
      return { call, span: { start, end } };
    });
    const stepSpan: Span = {
      start: step.model ? model.start : Math.min(model.start, ...calls.map((entry) => entry.span.start)),
      end: Math.max(model.end, ...calls.map((entry) => entry.span.end)),
    };
    cursor = stepSpan.end;
    return { step, stepSpan, model, calls };
  });
  const origin = Math.min(runStart, ...spans.map((entry) => entry.stepSpan.start));
  const total = Math.max(1, runEnd - origin, ...spans.map((entry) => entry.stepSpan.end - origin));
  const bar = (kind: BarKind, span: Span): WaterfallBar => {
    const durationMs = Math.max(0, span.end - span.start);
    const width = Math.max(MIN_WIDTH_PERCENT, (durationMs / total) * 100);
    const left = Math.min(100 - width, Math.max(0, ((span.start - origin) / total) * 100));
    return { kind, left, width, startMs: span.start - origin, durationMs };
  };
  const rows = spans.map(({ step, stepSpan, model, calls }) => ({
    step,
    // A step's bar is its model wait (the calls have their own rows); an approval step has no model call.
    bar: step.model ? bar(step.model.pending ? "pending" : step.model.retries > 0 ? "retried" : "model", model) : bar("approval", stepSpan),
    calls: calls.map(({ call, span }) => ({ call, bar: bar(callKind(call), span) })),
  }));
  // Before the first model call: the session connecting to servers and listing their tools.
  const first = spans[0]?.stepSpan.start;
  const setup = first !== undefined && first > origin ? bar("setup", { start: origin, end: first }) : null;
  return { rows, totalMs: total, setup };
}

/** The bar as inline SVG: presentation attributes, because the page's CSP admits no style attribute. */
export function barTrack(bar: WaterfallBar, label: string) {
  return html`<svg class="wf-track" width="100%" height="14" role="img" aria-label="${label}: starts at ${bar.startMs} ms, lasts ${bar.durationMs} ms"><rect class="wf-bar wf-${bar.kind}" data-start-ms="${bar.startMs}" x="${bar.left.toFixed(2)}%" y="1" width="${bar.width.toFixed(2)}%" height="12" rx="2" fill="${FILL[bar.kind]}"></rect></svg>`;
}

/** The legend, so colours are not the only cue (each bar's accessible name says what it is too). */
export function waterfallLegend(totalMs: number) {
  const entries: Array<[BarKind, string]> = [
    ["setup", "connecting, listing tools"],
    ["model", "model wait"],
    ["retried", "model wait with retries"],
    ["pending", "model never answered"],
    ["tool", "tool call"],
    ["failed", "failed or refused call"],
    ["approval", "approval or pause"],
  ];
  return html`<p class="wf-legend muted">${entries.map(
    ([kind, text]) =>
      html`<span><svg width="10" height="10" aria-hidden="true"><rect width="10" height="10" rx="2" fill="${FILL[kind]}"></rect></svg> ${text}</span> `,
  )}· axis 0 – ${totalMs} ms</p>`;
}

export function outcomeBadge(outcome: string) {
  return html`<span class="${outcome === "ok" ? "ok" : outcome === "error" || outcome === "interrupted" ? "bad" : "warn"}">${outcome}</span>`;
}

/** How a call its run paused on was decided, as the run that resumed it recorded. */
export interface CallResolution extends UserDecision {
  /** When the decision was applied (the resumed run's record of the call), epoch ms. */
  at?: number;
}

export interface WaterfallOptions {
  /** Decisions on this (paused) run's waiting calls, by tool call id, from the run that resumed it. */
  resolved?: ReadonlyMap<string, CallResolution>;
  /** What a call still waiting for approval says: who decides, in the words of the page's reader. */
  waitingNote?: string;
}

/** Who decides a waiting call, for a reader who may be either: a client that can ask its user, or else the orchestrator. */
const WAITING_NOTE = "Waiting for approval: the user decides in their chat client (or the orchestrator, for a client that cannot ask them).";

/** A step with this many calls, or a run with this many bars, is shown compact: bars only, details closed. */
const COMPACT_CALLS = 3;
const COMPACT_BARS = 10;

/**
 * The steps and their tool calls as bars on the run's time axis, one line each. What a step or a
 * call carried (text, arguments, result, error) is open below its bar in a short run, and opens
 * on demand (`<details>`) in a compact one, so a step with many calls stays a few lines tall.
 */
export function runWaterfall(steps: readonly StepRecord[], startedAt: number, endedAt: number, options: WaterfallOptions = {}) {
  const { rows, totalMs, setup } = waterfallRows(steps, startedAt, endedAt);
  const compactRun = rows.reduce((sum, row) => sum + 1 + row.calls.length, 0) > COMPACT_BARS;
  return html`${waterfallLegend(totalMs)}
<ol class="wf" aria-label="Run timeline">${setup ? html`<li class="wf-step"><div class="wf-row"><span class="wf-label muted">Before the first step</span>${barTrack(setup, "Connecting and listing tools")}<span class="wf-dur">${setup.durationMs} ms</span></div></li>` : ""}${rows.map((row) => stepRow(row, compactRun || row.calls.length >= COMPACT_CALLS, options))}</ol>`;
}

/** A step without a model call (decisions on resume): who decided each call, how, and when. */
function decisions(calls: WaterfallRow["calls"]) {
  return html`<ul>${calls.map(({ call }) =>
    call.decision
      ? html`<li><code>${call.name}</code>: ${call.decision.outcome} by the ${call.decision.by}${call.startedAt === undefined ? "" : html` at ${formatTime(call.startedAt)}`}</li>`
      : "",
  )}</ul>`;
}

function stepRow({ step, bar, calls }: WaterfallRow, compact: boolean, options: WaterfallOptions) {
  const open = compact ? "" : html` open`;
  const name = `Step ${step.index + 1}`;
  const model = step.model;
  return html`<li class="wf-step${compact ? " wf-compact" : ""}"><details${open}><summary class="wf-row"><span class="wf-label">${name} <span class="muted">${step.finishReason}${model && model.retries > 0 ? html` · <span class="warn">${model.retries} retries</span>` : ""}</span></span>${barTrack(bar, `${name}, ${model ? "model wait" : step.finishReason}`)}<span class="wf-dur">${bar.durationMs} ms</span></summary>
<div class="wf-detail">${
    model?.pending
      ? html`<p class="error">No answer: waited ${model.latencyMs} ms on ${model.provider} <code>${model.model}</code> at <code>${model.endpoint ?? "its endpoint"}</code>${model.retries > 0 ? `, ${model.retries} failed attempts` : ""}, until the run ended.</p>`
      : ""
  }${
    model
      ? html`<p>Model ${model.provider} <code>${model.model}</code>, ${model.latencyMs} ms${model.retries > 0 ? `, ${model.retries} retries` : ""} · ${step.inputTokens} tokens in, ${step.outputTokens} out</p>`
      : html`<p>No model call: the decisions this run resumed with.</p>${decisions(calls)}`
  }
${step.text ? html`<pre>${step.text}</pre>` : ""}</div></details>
${calls.length === 0 ? "" : html`<ol class="wf-calls">${calls.map(({ call, bar: callBar }) => html`<li><details${open}><summary class="wf-row"><span class="wf-label"><code>${call.name}</code> ${outcomeBadge(shownStatus(call, options))}</span>${barTrack(callBar, `Tool call ${call.name}`)}<span class="wf-dur">${callBar.durationMs} ms</span></summary>${toolCallBlock(call, options)}</details></li>`)}</ol>`}</li>`;
}

/** A waiting call decided since (a resumed run) shows the decision, not the wait it no longer is. */
function shownStatus(call: ToolCallRecord, options: WaterfallOptions): string {
  if (call.status !== "awaiting_approval") return call.status;
  return options.resolved?.get(call.toolCallId)?.outcome ?? call.status;
}

/** A waiting call is not an error: it says who decides, or, once decided in the run that resumed it, what was decided. */
function waitingBlock(call: ToolCallRecord, options: WaterfallOptions) {
  const resolution = options.resolved?.get(call.toolCallId);
  if (!resolution) return html`<p class="waiting">${options.waitingNote ?? WAITING_NOTE}</p>`;
  return html`<p class="decided">${resolution.outcome === "approved" ? "Approved" : `Not run: ${resolution.outcome.replaceAll("_", " ")}`} by the ${resolution.by}${resolution.at === undefined ? "" : html` at ${formatTime(resolution.at)}`}, after this run paused: the run that resumed it ${resolution.outcome === "approved" ? "ran" : "refused"} the call.</p>`;
}

function toolCallBlock(call: ToolCallRecord, options: WaterfallOptions = {}) {
  return html`<section class="call" aria-label="Tool call ${call.name}"><h4>Tool call <code>${call.name}</code> ${outcomeBadge(shownStatus(call, options))} <span class="muted">${call.elapsedMs} ms, ${call.bytes} bytes</span></h4>
${call.decision ? html`<p>Decision: ${call.decision.outcome} by the ${call.decision.by}</p>` : ""}
${call.args === undefined ? "" : html`<p class="muted">Arguments</p><pre>${call.args}</pre>`}
${call.result === undefined ? "" : html`<p class="muted">Result (excerpt)</p><pre>${call.result}</pre>`}
${call.status === "awaiting_approval" ? waitingBlock(call, options) : call.error ? html`<p class="error">${call.error}</p>` : ""}</section>`;
}
