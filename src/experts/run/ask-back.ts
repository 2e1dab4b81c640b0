import { tool, type ModelMessage, type Tool, type ToolResultPart } from "ai";
import { z } from "zod";
import type { Budget } from "../../catalog/catalog-schema";
import type { ExpertRunResult, RunUsage } from "./expert-types";
import type { BudgetUsed, PausedRun } from "./paused-run";
import type { RunRecorder } from "./run-recorder";

/** Downstream tools are exposed as `server__tool`, so this built-in name cannot collide with one. */
export const ASK_ORCHESTRATOR = "ask_orchestrator";

const questionSchema = z.object({ question: z.string().min(1).max(4_000) });

/**
 * The built-in tool of an `ask_back` expert. It has no `execute`: the AI SDK ends the loop on a
 * call to a tool without one, leaving the call unanswered, which is the pause.
 */
export function askOrchestratorTool(): Tool {
  return tool({
    description:
      "Ask the orchestrator (the agent that called you) one question when you cannot go on without its answer, e.g. a choice only it can make or a detail it did not give. Your run pauses and resumes with its answer as this tool's result.",
    inputSchema: questionSchema,
  });
}

export interface PendingQuestion {
  question: string;
  callIds: string[];
}

/**
 * The ask_orchestrator calls the loop left unanswered in the run's last step, if any. Marks them
 * asked in the step record (the recorder saw them as never executed).
 */
export function pendingQuestion(recorder: RunRecorder): PendingQuestion | undefined {
  const last = recorder.responseMessages.findLast((message) => message.role === "assistant");
  if (!last || typeof last.content === "string") return undefined;
  const asks = last.content.flatMap((part) => (part.type === "tool-call" && part.toolName === ASK_ORCHESTRATOR ? [part] : []));
  const answered = new Set(
    recorder.responseMessages.flatMap((message) =>
      message.role === "tool" ? message.content.map((part) => ("toolCallId" in part ? part.toolCallId : "")) : [],
    ),
  );
  const pending = asks.filter((part) => !answered.has(part.toolCallId));
  const first = pending[0];
  if (!first) return undefined;
  const parsed = questionSchema.safeParse(first.input);
  for (const call of recorder.steps.at(-1)?.toolCalls ?? []) {
    if (pending.some((part) => part.toolCallId === call.toolCallId)) {
      call.status = "ok";
      delete call.error;
    }
  }
  return { question: parsed.success ? parsed.data.question : String(first.input), callIds: pending.map((part) => part.toolCallId) };
}

/**
 * The turns a resumed run continues from: the paused turns, then the orchestrator's answer as
 * the result of the ask_orchestrator call (a further question asked in the same step is
 * answered as not sent, so every call has its result, which providers require).
 */
export function resumedTurns(paused: PausedRun, answer: string): ModelMessage[] {
  const results: ToolResultPart[] = paused.askCallIds.map((toolCallId, index) => ({
    type: "tool-result",
    toolCallId,
    toolName: ASK_ORCHESTRATOR,
    output: { type: "text", value: index === 0 ? answer : "Not sent: ask one question at a time." },
  }));
  const turns = [...paused.turns];
  const last = turns.at(-1);
  // Results of downstream calls made in the same step are already in a tool turn: join it.
  if (last?.role === "tool") return [...turns.slice(0, -1), { role: "tool", content: [...last.content, ...results] }];
  return [...turns, { role: "tool", content: results }];
}

/** The budget left after `used`; a resumed run always has one step to answer in. */
export function remainingBudget(budget: Budget, used: BudgetUsed): Budget {
  return {
    ...budget,
    max_steps: Math.max(1, budget.max_steps - used.steps),
    max_tool_calls: Math.max(0, budget.max_tool_calls - used.toolCalls),
    max_output_tokens: Math.max(1, budget.max_output_tokens - used.outputTokens),
    timeout_ms: Math.max(1, budget.timeout_ms - used.elapsedMs),
  };
}

export function addUsage(used: BudgetUsed, usage: RunUsage): BudgetUsed {
  return {
    steps: used.steps + usage.steps,
    toolCalls: used.toolCalls + usage.toolCalls,
    outputTokens: used.outputTokens + usage.outputTokens,
    elapsedMs: used.elapsedMs + usage.elapsedMs,
  };
}

export const NOTHING_USED: BudgetUsed = { steps: 0, toolCalls: 0, outputTokens: 0, elapsedMs: 0 };

/**
 * A resumed run's result opens with the turns it continued from instead of the user turn the
 * runner builds from the call's arguments (a reply has none of its own).
 */
export function withOpeningTurns(result: ExpertRunResult, opening: readonly ModelMessage[] | undefined): ExpertRunResult {
  if (!opening || result.messages.length === 0) return result;
  return { ...result, messages: [...opening, ...result.messages.slice(1)] };
}
