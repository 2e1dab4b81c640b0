import { describe, expect, it } from "vitest";
import type { ExpertCallResult } from "../../../src/experts/session/expert-call";
import { ResumableStreams } from "../../../src/experts/session/resumable-streams";

const MINUTE = 60_000;
const result = (runId: string): ExpertCallResult => ({
  runId,
  outcome: "ok",
  text: "done",
  usage: {
    steps: 1,
    toolCalls: 0,
    refusedToolCalls: 0,
    inputTokens: 1,
    outputTokens: 1,
    elapsedMs: 1,
    retries: 0,
    downstreamBytesRead: 0,
    bytesReturned: 4,
    budgetExhausted: null,
  },
  traceId: "t",
});
const ref = (id: string) => ({ id, requestId: 1, structuredExpected: false });

/** The streams a session keeps for clients that resume a dropped 2025-11-25 call (in memory, bounded). */
describe("ResumableStreams' bounds", () => {
  it("keeps an ended stream for ten minutes, then forgets it at the next call after", async () => {
    const streams = new ResumableStreams();
    const start = 1_000_000;
    streams.open(ref("a"), "run-a", start);
    streams.finish("a", result("run-a"), start);
    streams.open(ref("b"), "run-b", start + 9 * MINUTE);
    expect((await streams.after("a", 0, 0))?.result?.result.runId).toBe("run-a");
    streams.open(ref("c"), "run-c", start + 11 * MINUTE);
    expect(await streams.after("a", 0, 0)).toBeNull();
    // A stream still running is never swept, however old.
    expect(await streams.after("b", 0, 0)).toMatchObject({ ref: ref("b"), progress: [] });
  });

  it("at 200 streams gives up the oldest ended one, never one still running", async () => {
    const streams = new ResumableStreams();
    const now = 5_000_000;
    streams.open(ref("running"), "run-running", now);
    for (let i = 0; i < 199; i++) {
      streams.open(ref(`s${i}`), `run-${i}`, now);
      streams.finish(`s${i}`, result(`run-${i}`), now);
    }
    streams.open(ref("new"), "run-new", now);
    expect(await streams.after("s0", 0, 0)).toBeNull();
    expect(await streams.after("s1", 0, 0)).not.toBeNull();
    expect(await streams.after("running", 0, 0)).not.toBeNull();
    expect(await streams.after("new", 0, 0)).not.toBeNull();
  });
});
