import { failedRun } from "../run/run-end";
import type { ExpertCallResult } from "../core/call-types";
import type { StoredRun } from "../records/run-log";
import { RunInterruptedError, RunOverdueError, StreamAnswerLostError } from "./protocol-errors";

/**
 * The answer of a call whose run a restart cut off (no run record, or one the constructor closed
 * as interrupted): a tool error naming the run, which the client can retry. The same text ends
 * a resumed stream, a task and the call itself, whichever way the client asks.
 */
export function interruptedRunResult(runId: string, startedAt = Date.now()): ExpertCallResult {
  return errorResult(runId, new RunInterruptedError(runId), startedAt);
}

function errorResult(runId: string, error: Error, startedAt: number): ExpertCallResult {
  const failed = failedRun(error, startedAt);
  return { runId, outcome: failed.outcome, text: failed.text, usage: failed.usage };
}

/**
 * What a resumed stream answers from the run's record when it holds no answer of the run: a
 * restart came between (interrupted, or ended before it with the answer held in memory only),
 * or the run is still going past its deadline.
 */
export function answerFromRecord(runId: string, run: StoredRun | null): ExpertCallResult {
  if (!run || run.outcome === "interrupted") return interruptedRunResult(runId, run?.startedAt);
  if (run.outcome === "running") return errorResult(runId, new RunOverdueError(runId), run.startedAt);
  const failed = failedRun(new StreamAnswerLostError(runId, run.outcome), run.startedAt);
  return { runId, outcome: failed.outcome, text: failed.text, usage: run.usage ?? failed.usage, ...(run.traceId ? { traceId: run.traceId } : {}) };
}
