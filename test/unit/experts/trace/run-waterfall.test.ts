import { describe, expect, it } from "vitest";
import type { StepRecord } from "../../../../src/experts/core/run-types";
import { waterfallRows } from "../../../../src/experts/trace/run-waterfall";

const model = (latencyMs: number, extra: Partial<NonNullable<StepRecord["model"]>> = {}) => ({ provider: "p", model: "m", latencyMs, retries: 0, ...extra });
const step = (index: number, fields: Partial<StepRecord>): StepRecord => ({
  index,
  finishReason: "stop",
  inputTokens: 0,
  outputTokens: 0,
  text: "",
  toolCalls: [],
  ...fields,
});
const call = (name: string, elapsedMs: number, extra: Partial<StepRecord["toolCalls"][number]> = {}) => ({
  toolCallId: name,
  name,
  status: "ok" as const,
  bytes: 0,
  elapsedMs,
  ...extra,
});

describe("waterfall layout", () => {
  it("places bars by their recorded start times, as percent of the run", () => {
    const { rows, totalMs } = waterfallRows(
      [
        step(0, { model: model(100, { startedAt: 1_000 }), toolCalls: [call("a", 300, { startedAt: 1_100 })] }),
        step(1, { model: model(100, { startedAt: 1_400, retries: 2 }) }),
      ],
      1_000,
      2_000,
    );
    expect(totalMs).toBe(1_000);
    expect(rows.map((row) => [row.bar.kind, row.bar.left, row.bar.width])).toEqual([
      ["model", 0, 10],
      ["retried", 40, 10],
    ]);
    expect(rows[0]?.calls.map(({ bar }) => [bar.kind, bar.left, bar.width])).toEqual([["tool", 10, 30]]);
  });

  it("lays out steps stored without start times one after another, so old traces still read in order", () => {
    const { rows } = waterfallRows(
      [step(0, { model: model(200), toolCalls: [call("a", 100), call("b", 0, { status: "refused" })] }), step(1, { model: model(200) })],
      0,
      1_000,
    );
    expect(rows[0]?.calls.map(({ bar }) => [bar.kind, bar.left])).toEqual([
      ["tool", 20],
      ["failed", 30],
    ]);
    // A 0 ms call is still drawn; the next step starts where the last call ended.
    expect(rows[0]?.calls[1]?.bar.width).toBeGreaterThan(0);
    expect(rows[1]?.bar.left).toBe(30);
  });

  it("runs a call left waiting for approval to the run's end, and draws an approval step without a model call", () => {
    const { rows } = waterfallRows(
      [
        step(0, { finishReason: "approval", toolCalls: [call("erase", 50, { startedAt: 0, decision: { outcome: "approved", by: "user" } })] }),
        step(1, { model: model(100, { startedAt: 100 }), toolCalls: [call("wipe", 0, { startedAt: 200, status: "awaiting_approval" })] }),
      ],
      0,
      1_000,
    );
    expect(rows[0]?.bar).toMatchObject({ kind: "approval", left: 0, width: 5 });
    expect(rows[1]?.calls[0]?.bar).toMatchObject({ kind: "approval", left: 20, width: 80 });
  });
});
