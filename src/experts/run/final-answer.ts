import type { Budget } from "../../catalog/catalog-schema";
import type { BudgetKind } from "./expert-types";
import type { RunRecorder } from "./run-recorder";

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
  const tail = [
    ...(exhausted ? [budgetNote(exhausted, budget, recorder)] : []),
    ...serverNotes.map((note) => `[note: ${note}]`),
  ];
  return tail.length === 0 ? body : `${body}\n\n${tail.join("\n")}`;
}
