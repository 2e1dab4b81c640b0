import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { ExpertCallResult } from "../../../src/experts/core/call-types";
import { FIRST_READER, ResumableStreams, type ResumableStreamRef } from "../../../src/experts/protocol/resumable-streams";
import type { StoredRun } from "../../../src/experts/records/run-log";
import { sessionOf } from "../../support/workers/session-helpers";

const MINUTE = 60_000;
const usage = {
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
};
const result = (runId: string): ExpertCallResult => ({ runId, outcome: "ok", text: "done", usage, traceId: "t" });
const ref = (id: string, requestId: string | number = 1): ResumableStreamRef => ({
  id,
  requestId,
  structuredExpected: false,
  timeoutMs: 1_000,
  progressToken: "p",
});
const recordOf = (id: string, outcome: StoredRun["outcome"]) => ({ id, outcome, startedAt: 1, usage, traceId: "t" }) as StoredRun;

/**
 * The streams a session keeps for clients that resume a dropped 2025-11-25 call: the events in
 * memory (bounded), which run and request each stream is in the session's SQLite. Each test gets
 * a session of its own for that SQLite and runs the class in it, with the run records it names.
 */
async function withStreams(runs: Record<string, StoredRun["outcome"]>, test: (fresh: () => ResumableStreams) => Promise<void>): Promise<void> {
  await runInDurableObject(sessionOf(`resumable-${crypto.randomUUID()}`), async (_instance, state) => {
    const runRecord = (runId: string) => (runs[runId] === undefined ? null : recordOf(runId, runs[runId]));
    await test(() => new ResumableStreams(state.storage.sql, runRecord));
  });
}

describe("ResumableStreams' bounds", () => {
  it("keeps an ended stream for ten minutes, then forgets it at the next call after", async () => {
    await withStreams({}, async (fresh) => {
      const streams = fresh();
      const start = Date.now() - 20 * MINUTE;
      streams.open(ref("a"), "run-a", start);
      streams.finish("a", result("run-a"), start);
      streams.open(ref("b"), "run-b", start + 9 * MINUTE);
      expect((await streams.after("a", 0, 0, "r", start + 9 * MINUTE))?.result?.result.runId).toBe("run-a");
      streams.open(ref("c"), "run-c", start + 11 * MINUTE);
      expect(await streams.after("a", 0, 0, "r", start + 11 * MINUTE)).toBeNull();
      // A stream still running is never swept, however old.
      expect(await streams.after("b", 0, 0, "r", start + 9 * MINUTE)).toMatchObject({ ref: ref("b"), progress: [] });
    });
  });

  it("at 200 streams gives up the oldest ended one's events, never one still running; a resume of it gets the run's record", async () => {
    await withStreams({ "run-0": "ok" }, async (fresh) => {
      const streams = fresh();
      const now = Date.now();
      streams.open(ref("running"), "run-running", now);
      for (let i = 0; i < 199; i++) {
        streams.open(ref(`s${i}`), `run-${i}`, now);
        streams.finish(`s${i}`, result(`run-${i}`), now);
      }
      streams.open(ref("new"), "run-new", now);
      const lost = await streams.after("s0", 0, 0, "r", now);
      expect(lost?.result?.result).toMatchObject({
        runId: "run-0",
        outcome: "error",
        text: expect.stringContaining("Run run-0 ended (ok) before this stream was resumed"),
      });
      expect((await streams.after("s1", 0, 0, "r", now))?.result?.result).toMatchObject({ outcome: "ok", text: "done" });
      expect((await streams.after("running", 0, 0, "r", now))?.result).toBeUndefined();
      expect(await streams.after("new", 0, 0, "r", now)).not.toBeNull();
    });
  });
});

/**
 * Issue 35.5: a client that reconnects at once may be here before the server noticed its first
 * connection drop. Whichever comes first, a run whose stream a connection reads is not given up.
 */
describe("ResumableStreams: a resume wins over the drop, whatever the order", () => {
  it("a resume that attached before the first connection's drop was noticed keeps the run (nothing to cancel)", async () => {
    await withStreams({}, async (fresh) => {
      const streams = fresh();
      streams.open(ref("x"), "run-x");
      await streams.after("x", 0, 0, "resumed");
      const dropped = streams.dropped("x", FIRST_READER);
      expect(dropped).toMatchObject({ runId: "run-x", reading: 1 });
      expect(dropped?.check()).toBe(false);
    });
  });

  it("a drop noticed first gives up the run only if no resume attached within the grace", async () => {
    await withStreams({}, async (fresh) => {
      const streams = fresh();
      streams.open(ref("y"), "run-y");
      const dropped = streams.dropped("y", FIRST_READER);
      expect(dropped).toMatchObject({ runId: "run-y", reading: 0 });
      await streams.after("y", 0, 0, "resumed");
      expect(dropped?.check()).toBe(false);

      streams.open(ref("z"), "run-z");
      expect(streams.dropped("z", FIRST_READER)?.check()).toBe(true);
    });
  });

  it("a resumed connection that drops as well gives up the run, unless another resumes; its own late read does not count", async () => {
    await withStreams({}, async (fresh) => {
      const streams = fresh();
      streams.open(ref("w"), "run-w");
      await streams.after("w", 0, 0, "r1");
      expect(streams.dropped("w", FIRST_READER)?.reading).toBe(1);
      const dropped = streams.dropped("w", "r1");
      // A round of r1's already on its way reads once more after the drop.
      await streams.after("w", 0, 0, "r1");
      expect(dropped?.check()).toBe(true);
      await streams.after("w", 0, 0, "r2");
      expect(dropped?.check()).toBe(false);
    });
  });

  it("a run that ended has nothing to give up", async () => {
    await withStreams({}, async (fresh) => {
      const streams = fresh();
      streams.open(ref("v"), "run-v");
      streams.finish("v", result("run-v"));
      expect(streams.dropped("v", FIRST_READER)).toBeNull();
    });
  });
});

/** Issue 40.1: a restart ends the run and the events held in memory; the stream's record says whose run it was. */
describe("ResumableStreams after a restart", () => {
  it("answers a resume of a cut run at once with its interrupted outcome, for the original request id, after the client's last event", async () => {
    await withStreams({ "run-cut": "interrupted" }, async (fresh) => {
      fresh().open(ref("cut", "req-7"), "run-cut");
      fresh().open(ref("gone", 8), "run-never-recorded");
      const restarted = fresh();
      const replay = await restarted.after("cut", 3, 30_000, "r");
      expect(replay?.ref).toMatchObject({ requestId: "req-7", progressToken: "p" });
      expect(replay?.progress).toEqual([]);
      expect(replay?.result?.seq).toBe(4);
      expect(replay?.result?.result).toMatchObject({
        runId: "run-cut",
        outcome: "error",
        text: expect.stringMatching(/^Run run-cut was interrupted: the server restarted during the run.*call the tool again/),
      });
      // A run cut before its record was written is interrupted as well; the request id keeps its type.
      const unrecorded = await restarted.after("gone", 0, 0, "r");
      expect(unrecorded?.ref.requestId).toBe(8);
      expect(unrecorded?.result?.result.text).toContain("Run run-never-recorded was interrupted");
      expect(await restarted.after("never-opened", 0, 0, "r")).toBeNull();
    });
  });

  it("keeps no record of a stream whose request id is outsized (the client's to choose): a resume after a restart finds nothing", async () => {
    await withStreams({ "run-big": "interrupted" }, async (fresh) => {
      fresh().open(ref("big", "x".repeat(2_000)), "run-big");
      expect(await fresh().after("big", 0, 0, "r")).toBeNull();
    });
  });

  it("ends a resumed stream at the run's deadline when the run has not ended by then", async () => {
    await withStreams({ "run-slow": "running" }, async (fresh) => {
      const streams = fresh();
      const opened = Date.now() - 10 * MINUTE;
      streams.open(ref("slow"), "run-slow", opened);
      const replay = await streams.after("slow", 0, 30_000, "r");
      expect(replay?.result?.result.text).toContain("Run run-slow has not ended within its budget's timeout");
    });
  });
});
