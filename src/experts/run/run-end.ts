import type { ModelMessage } from "ai";
import type { Budget, ExpertConfig } from "../../catalog/catalog-schema";
import { utf8Bytes } from "../../downstream/tool-result-text";
import { SlipsnisseError } from "../../errors";
import { describeModelError } from "../models/describe-model-error";
import type { TrackedModel } from "../models/model-fault-tracker";
import { ModelRetryStoppedError } from "../models/model-retry";
import type { RunSignals } from "../core/abort";
import { DownstreamUnavailableError } from "../../downstream/downstream-errors";
import { ExpertToolsUnavailableError } from "../tools/tool-errors";
import type { BudgetKind, ExpertRunResult, JsonObject, PausedQuestion, RunOutcome, RunUsage, UnavailableTool } from "../core/run-types";
import type { RunBudget } from "../core/run-budget";
import type { RunRecorder } from "../core/run-recorder";

/*
 * How a run ends, in one place: the fields a run mode ends with (`RunEnd`), the answer text it
 * returns (`composeAnswer`, `gatheredSummary`, `budgetNote`), the end of a run whose model or
 * tool call threw (`interruptedRunEnd`), one that failed outside the model loop (`failedRun`),
 * and the `ExpertRunResult` they all become (`assembleResult`).
 */

export interface RunEnd {
  outcome: RunOutcome;
  text: string;
  exhausted?: BudgetKind | null;
  error?: SlipsnisseError;
  /** The answer as a value, for an expert with an `output_schema`; `text` is then its JSON. */
  structured?: JsonObject;
  /** A paused run's question (outcome "paused"). */
  question?: PausedQuestion;
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
    ...(recorder.decidedCalls().length > 0 ? { decidedCalls: recorder.decidedCalls() } : {}),
    ...(end.structured ? { structured: end.structured } : {}),
    ...(end.question ? { question: end.question } : {}),
    ...(end.error ? { error: { kind: end.error.kind, message: end.error.toolMessage } } : {}),
    ...(recorder.unavailable.length > 0 ? { unavailable: [...recorder.unavailable] } : {}),
    messages: threadMessages(end, recorder),
    notes: end.notes,
  };
}

function unfinished(recorder: RunRecorder): Pick<ExpertRunResult, "unfinishedToolCalls" | "pendingModelCall"> {
  const calls = recorder.unfinishedCalls();
  const pending = recorder.pendingModelCall();
  return { ...(calls.length === 0 ? {} : { unfinishedToolCalls: calls }), ...(pending ? { pendingModelCall: pending } : {}) };
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

const EXCERPT_CHARS = 600;
const MAX_SUMMARIZED_CALLS = 8;

function budgetDetail(kind: BudgetKind, budget: Budget, recorder: RunRecorder): string {
  switch (kind) {
    case "steps":
      return `stopped after ${budget.max_steps} steps`;
    case "timeout":
      return `stopped after ${budget.timeout_ms} ms`;
    case "tool_calls":
      return `used all ${budget.max_tool_calls} tool calls`;
    case "output_tokens":
      return `used ${recorder.outputTokens} of ${budget.max_output_tokens} output tokens`;
  }
}

export function budgetNote(kind: BudgetKind, budget: Budget, recorder: RunRecorder): string {
  return `[budget exhausted (${kind}): ${budgetDetail(kind, budget, recorder)}; the answer may be incomplete.]`;
}

/** When the model wrote nothing usable: what its tool calls returned, shortened. */
export function gatheredSummary(recorder: RunRecorder): string {
  const results = recorder.gatheredResults().slice(-MAX_SUMMARIZED_CALLS);
  if (results.length === 0) return "The expert stopped before it gathered anything.";
  const items = results.map(({ name, text }) => {
    const excerpt = text.length > EXCERPT_CHARS ? `${text.slice(0, EXCERPT_CHARS)}…` : text;
    return `- ${name}: ${excerpt.trim()}`;
  });
  return `The expert stopped before writing an answer. What its tool calls returned:\n${items.join("\n")}`;
}

/**
 * The text returned to the orchestrator: the model's last words (or a summary of the gathered
 * tool results when it had none), then any budget note and server notes.
 */
export function composeAnswer(recorder: RunRecorder, budget: Budget, exhausted: BudgetKind | null, serverNotes: readonly string[]): string {
  const body = recorder.lastText.trim() || gatheredSummary(recorder);
  const tail = [...(exhausted ? [budgetNote(exhausted, budget, recorder)] : []), ...serverNotes.map((note) => `[note: ${note}]`)];
  return tail.length === 0 ? body : `${body}\n\n${tail.join("\n")}`;
}

export type RunEndFields = Omit<RunEnd, "userMessage" | "notes">;

/**
 * How a run whose model call or tool call threw ends: the caller's cancel wins, then the wall
 * clock (naming the provider when it was failing and being retried), then the error itself
 * (a retry stopped because its wait would pass the deadline also counts as the clock running out).
 * `gathered` is the answer a timed-out run returns from what it had.
 */
export function interruptedRunEnd(error: unknown, signals: RunSignals, tracked: TrackedModel, expert: ExpertConfig, gathered: () => string): RunEndFields {
  if (signals.cancelled()) return { outcome: "cancelled", text: "The expert call was cancelled by the caller." };
  if (signals.timedOut()) {
    const failing = tracked.pendingFailure();
    if (failing !== undefined) {
      const described = describeModelError(failing, expert);
      return { outcome: "error", exhausted: "timeout", text: described.toolMessage, error: described };
    }
    return { outcome: "budget_exhausted", exhausted: "timeout", text: gathered() };
  }
  const described = SlipsnisseError.is(error) ? error : describeModelError(error, expert);
  // A retry whose wait did not fit in the time left: the time budget is what ran out.
  const exhausted = error instanceof ModelRetryStoppedError && error.reason === "deadline" ? { exhausted: "timeout" as const } : {};
  return { outcome: "error", text: described.toolMessage, error: described, ...exhausted };
}

/** A run that ended before or outside the model loop, shaped like any other run result. */
export function failedRun(error: unknown, startedAt: number): ExpertRunResult {
  const known = SlipsnisseError.is(error);
  const message = known ? error.toolMessage : "The expert failed unexpectedly. Try again; if it persists, an admin can look up the run record.";
  const unavailable = unavailableIn(error);
  return {
    outcome: "error",
    text: message,
    error: { kind: known ? error.kind : "internal", message },
    ...(unavailable.length > 0 ? { unavailable } : {}),
    steps: [],
    messages: [],
    usage: unusedRun(startedAt),
  };
}

/** What a run that failed before its model loop could not reach, when that was why. */
function unavailableIn(error: unknown): UnavailableTool[] {
  if (error instanceof ExpertToolsUnavailableError) return error.servers.map(({ serverId, reason }) => ({ server: serverId, reason }));
  if (error instanceof DownstreamUnavailableError) return [{ server: error.serverId, reason: error.reason }];
  return [];
}

/** The usage of a run that ended before its model ran (it failed, or paused for a connection): nothing but the time. */
export function unusedRun(startedAt: number): RunUsage {
  return {
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
  };
}
