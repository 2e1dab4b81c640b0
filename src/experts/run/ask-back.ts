import { tool, type ModelMessage, type Tool, type ToolResultPart } from "ai";
import { z } from "zod";
import type { Budget } from "../../catalog/catalog-schema";
import type { ExpertRunResult, PausedQuestion, RunUsage, UserPrompter } from "../core/run-types";
import { askWithTimeout } from "../tools/tool-approval";
import type { BudgetUsed, PausedRun } from "./paused-run";
import type { RunRecorder } from "../core/run-recorder";

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

/**
 * The built-in tool for a question only the human user can answer. With a client that can be
 * asked mid-call (elicitation), its execute shows the question to the user and returns the
 * answer (or why there is none); without one it has no execute and pauses the run exactly like
 * ask_orchestrator, the question marked for the user so the orchestrator can relay it.
 */
export const ASK_USER = "ask_user";

export function askUserTool(askUser: UserPrompter | undefined, timeoutMs: number, recorder: RunRecorder): Tool {
  const description =
    "Ask the human user one question when only they can answer it (a preference, a confirmation, a fact they hold). Your run waits for their answer, which is this tool's result.";
  if (!askUser) return tool({ description, inputSchema: questionSchema });
  return tool({
    description,
    inputSchema: questionSchema,
    execute: async ({ question }, { toolCallId, abortSignal }) => {
      const started = Date.now();
      const reply = await askWithTimeout(() => askUser({ kind: "question", message: question }), timeoutMs, abortSignal);
      const answered = reply.action === "accept" && typeof reply.answer === "string";
      const text = answered ? (reply.answer ?? "") : unansweredText(reply.action, timeoutMs);
      recorder.recordCall({
        toolCallId,
        name: ASK_USER,
        status: answered ? "ok" : "declined",
        bytes: 0,
        elapsedMs: Date.now() - started,
        args: JSON.stringify({ question }).slice(0, 2_000),
        result: text.slice(0, 1_000),
        decision: {
          outcome: answered ? "answered" : reply.action === "timeout" ? "timed_out" : reply.action === "accept" ? "declined" : outcomeOf(reply.action),
          by: "user",
        },
      });
      return text;
    },
  });
}

/** The model reads why the user gave no answer. */
export function unansweredText(action: string, timeoutMs: number): string {
  if (action === "timeout") return `The user did not answer within ${Math.round(timeoutMs / 1000)} s. Go on without the answer.`;
  if (action === "cancel") return "The user dismissed the question without answering. Go on without the answer.";
  if (action === "failed") return "The question could not be shown to the user. Go on without the answer.";
  return "The user declined to answer. Go on without the answer.";
}

function outcomeOf(action: string): "declined" | "cancelled" | "failed" {
  return action === "cancel" ? "cancelled" : action === "failed" ? "failed" : "declined";
}

/**
 * Why the loop stopped with calls unanswered in the run's last step, if it did: downstream calls
 * awaiting approval (they pause the run first; a question asked beside them is answered "not
 * sent" on resume), else ask_orchestrator / ask_user questions. Marks those calls in the step
 * record (the recorder saw them as never executed).
 */
export function pendingQuestion(recorder: RunRecorder, gated: ReadonlyMap<string, { server: string; tool: string }> = new Map()): PausedQuestion | undefined {
  const last = recorder.responseMessages.findLast((message) => message.role === "assistant");
  if (!last || typeof last.content === "string") return undefined;
  const answered = new Set(
    recorder.responseMessages.flatMap((message) =>
      message.role === "tool" ? message.content.map((part) => ("toolCallId" in part ? part.toolCallId : "")) : [],
    ),
  );
  const unanswered = last.content.flatMap((part) => (part.type === "tool-call" && !answered.has(part.toolCallId) ? [part] : []));
  const asks = unanswered.filter((part) => part.toolName === ASK_ORCHESTRATOR || part.toolName === ASK_USER);
  const approvals = unanswered.flatMap((part) => {
    const target = gated.get(part.toolName);
    return target ? [{ toolCallId: part.toolCallId, name: part.toolName, server: target.server, tool: target.tool, input: part.input }] : [];
  });
  const first = asks[0];
  if (approvals.length === 0 && !first) return undefined;
  const stepCalls = recorder.steps.at(-1)?.toolCalls ?? [];
  for (const call of stepCalls) {
    if (approvals.some((approval) => approval.toolCallId === call.toolCallId)) {
      call.status = "awaiting_approval";
      call.error = "waiting for approval: not run until the user (or, for a client that cannot ask them, the orchestrator) approves it";
    } else if (asks.some((part) => part.toolCallId === call.toolCallId)) {
      call.status = "ok";
      delete call.error;
    }
  }
  const callIds = asks.map((part) => part.toolCallId);
  if (approvals.length > 0) return { kind: "approval", question: approvalQuestion(approvals), callIds, approvals };
  const parsed = questionSchema.safeParse(first?.input);
  return {
    kind: first?.toolName === ASK_USER ? "user" : "orchestrator",
    question: parsed.success ? parsed.data.question : String(first?.input),
    callIds,
  };
}

function approvalQuestion(approvals: ReadonlyArray<{ name: string; input: unknown }>): string {
  const lines = approvals.map((approval) => `- ${approval.name} ${safeJson(approval.input)}`);
  return `Approval needed: the expert wants to run ${approvals.length === 1 ? "this call" : "these calls"}:\n${lines.join("\n")}`;
}

function safeJson(value: unknown): string {
  try {
    const text = JSON.stringify(value) ?? "null";
    return text.length > 2_000 ? `${text.slice(0, 2_000)}…` : text;
  } catch {
    return "[not serialisable]";
  }
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
    toolName: askToolName(paused.turns, toolCallId),
    output: { type: "text", value: index === 0 ? answer : "Not sent: ask one question at a time." },
  }));
  return withToolResults(paused.turns, results);
}

/** The name of the question tool a call id belongs to (ask_orchestrator or ask_user). */
export function askToolName(turns: readonly ModelMessage[], toolCallId: string): string {
  for (const turn of turns) {
    if (turn.role !== "assistant" || typeof turn.content === "string") continue;
    const part = turn.content.find((candidate) => candidate.type === "tool-call" && candidate.toolCallId === toolCallId);
    if (part?.type === "tool-call") return part.toolName;
  }
  return ASK_ORCHESTRATOR;
}

/** Results of downstream calls made in the same step are already in a tool turn: join it. */
export function withToolResults(turns: readonly ModelMessage[], results: ToolResultPart[]): ModelMessage[] {
  const last = turns.at(-1);
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
