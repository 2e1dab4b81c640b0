import type { ModelMessage } from "ai";
import type { SlipsnisseError } from "../../errors";
import type { BudgetKind, ExpertRunResult, JsonObject, RunOutcome } from "./expert-types";
import { utf8Bytes } from "../../downstream/tool-result-text";
import type { RunBudget } from "./run-budget";
import type { RunRecorder } from "./run-recorder";

export interface RunEnd {
  outcome: RunOutcome;
  text: string;
  exhausted?: BudgetKind | null;
  error?: SlipsnisseError;
  /** The answer as a value, for an expert with an `output_schema`; `text` is then its JSON. */
  structured?: JsonObject;
  /** A paused run's question (outcome "paused"). */
  question?: { question: string; callIds: string[] };
  /** The user turn of this run; the thread keeps it with the model's turns unless the run failed. */
  userMessage: ModelMessage;
  notes: string[];
}

/** Shapes what the run gathered into the result the session stores and returns. */
export function assembleResult(end: RunEnd, recorder: RunRecorder, budget: RunBudget, startedAt: number): ExpertRunResult {
  return {
    outcome: end.outcome,
    text: end.text,
    usage: {
      steps: recorder.steps.length,
      inputTokens: recorder.inputTokens,
      outputTokens: recorder.outputTokens,
      toolCalls: budget.toolCallsUsed,
      refusedToolCalls: recorder.refusedCount(),
      downstreamBytesRead: recorder.downstreamBytesRead,
      bytesReturned: utf8Bytes(end.text),
      elapsedMs: Date.now() - startedAt,
      budgetExhausted: end.exhausted ?? null,
      retries: recorder.modelRetries,
    },
    steps: recorder.steps,
    ...unfinished(recorder),
    ...(end.structured ? { structured: end.structured } : {}),
    ...(end.question ? { question: end.question } : {}),
    ...(end.error ? { error: { kind: end.error.kind, message: end.error.toolMessage } } : {}),
    messages: threadMessages(end, recorder),
    notes: end.notes,
  };
}

function unfinished(recorder: RunRecorder): Pick<ExpertRunResult, "unfinishedToolCalls"> {
  const calls = recorder.unfinishedCalls();
  return calls.length === 0 ? {} : { unfinishedToolCalls: calls };
}

/**
 * The turns to append to the thread: the user turn, the completed steps, and the returned text
 * as an assistant turn when the model's own last turn was not that text (a summary, a tool
 * result). Failed and cancelled runs add nothing.
 */
function threadMessages(end: RunEnd, recorder: RunRecorder): ModelMessage[] {
  if (end.outcome === "error" || end.outcome === "cancelled") return [];
  const messages: ModelMessage[] = [end.userMessage, ...recorder.responseMessages];
  // A paused run's turns end on its unanswered ask_orchestrator call: nothing may come between
  // that call and its result.
  if (end.outcome !== "paused" && messages.at(-1)?.role !== "assistant") messages.push({ role: "assistant", content: end.text });
  return messages;
}
