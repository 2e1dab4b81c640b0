import { html } from "hono/html";
import type { StepRecord, ToolCallRecord } from "../../experts/run/expert-types";

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

const FAILED_STATUSES: ReadonlySet<ToolCallRecord["status"]> = new Set(["error", "refused", "withheld", "cancelled"]);
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
