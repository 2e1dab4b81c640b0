import type { ConnectRequest, ExpertCallRequest, ExpertCallResult, PausedAnswer } from "../core/call-types";
import type { ExpertRunResult, StepRecord } from "../core/run-types";
import type { RunEndTrace } from "../records/run-log";
import type { SessionRunTrace } from "./session-run-trace";

/** What the call answers besides the run's result: its thread, a paused run's question, a connect link. */
export interface AnswerParts {
  threadId: string | null;
  question?: PausedAnswer | undefined;
  connect?: ConnectRequest | undefined;
}

/**
 * The call's answer from the run's result and its stored trace (finishRunTrace). An error text can
 * quote a provider's or server's message, which may echo a credential: it is redacted as the run
 * record is. An eval run gets its steps as recorded, which its assertions check.
 */
export function redactedAnswer(
  trace: SessionRunTrace,
  request: ExpertCallRequest,
  result: ExpertRunResult,
  stored: { steps: StepRecord[]; end: RunEndTrace },
  parts: AnswerParts,
): ExpertCallResult {
  const { threadId, question, connect } = parts;
  return {
    runId: request.runId,
    outcome: result.outcome,
    text: result.error ? trace.redact(result.text) : result.text,
    ...(result.structured ? { structured: result.structured } : {}),
    ...(threadId === null ? {} : { thread: threadId }),
    ...(question ? { question } : {}),
    ...(connect ? { connect } : {}),
    ...(stored.end.unavailable.length > 0 ? { unavailable: [...stored.end.unavailable] } : {}),
    ...(request.evaluation ? { recordedSteps: stored.steps } : {}),
    usage: result.usage,
    traceId: trace.traceId,
  };
}
