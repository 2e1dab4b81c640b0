import { SlipsnisseError } from "../../errors";
import type { ExpertRunResult } from "../run/expert-types";

/** A run that ended before or outside the model loop, shaped like any other run result. */
export function failedRun(error: unknown, startedAt: number): ExpertRunResult {
  const known = SlipsnisseError.is(error);
  const message = known ? error.toolMessage : "The expert failed unexpectedly. Try again; if it persists, an admin can look up the run record.";
  return {
    outcome: "error",
    text: message,
    error: { kind: known ? error.kind : "internal", message },
    steps: [],
    messages: [],
    usage: {
      steps: 0,
      inputTokens: 0,
      outputTokens: 0,
      toolCalls: 0,
      refusedToolCalls: 0,
      downstreamBytesRead: 0,
      bytesReturned: 0,
      elapsedMs: Date.now() - startedAt,
      budgetExhausted: null,
      retries: 0,
    },
  };
}
