import type { Tool } from "ai";
import type { ToolPolicy } from "../../catalog/catalog-schema";
import type { DownstreamTool } from "../../downstream/downstream-types";
import type { ToolCallRecord, UserDecision, UserPrompter, UserReply } from "../core/run-types";
import type { RunRecorder } from "../core/run-recorder";
import { rawPreview, TRACE_BOUNDS } from "../core/trace-excerpt";
import { ApprovalUnavailableError, ToolCallDeclinedError } from "./tool-errors";
import { matchesAny } from "./tool-names";

/**
 * Whether a call of `server__tool` needs approval before it runs: the skill's `requires_approval`
 * globs, or the server annotating the tool `destructiveHint: true` (unless the admin opted out
 * with `approve_destructive: false`). Only an explicit annotation counts here: the MCP default for
 * an unannotated tool ("may destroy") would put every unannotated tool behind approval.
 */
export function requiresApproval(namespacedName: string, tool: DownstreamTool, policy: ToolPolicy): boolean {
  if (matchesAny(namespacedName, policy.requires_approval)) return true;
  return policy.approve_destructive && tool.annotations?.destructiveHint === true;
}

export interface ApprovalContext {
  /** Asks the human mid-call; absent when the client cannot be asked. */
  askUser?: UserPrompter;
  timeoutMs: number;
  /** Without `askUser`: true pauses the run on the call (synthesize), false refuses it (route). */
  canPause: boolean;
}

export interface GatedCall {
  recorder: RunRecorder;
  server: string;
  tool: string;
  exposedName: string;
}

/**
 * A tool that needs approval, as the model gets it. With a way to ask the user: its execute asks
 * first (tool name and arguments), runs the call only on an explicit approval and otherwise
 * throws a refusal the model reads. Without one, in synthesize mode: no execute, so the AI SDK
 * ends the loop on the call, unanswered, and the run pauses like an ask_orchestrator question
 * (`pendingQuestion` in run/ask-back.ts; run/approval-resume.ts runs or refuses it on resume). In
 * route mode, which cannot pause: a refusal naming why.
 */
export function gatedTool(inner: Tool, call: GatedCall, approval: ApprovalContext): Tool {
  const { askUser } = approval;
  if (!askUser) {
    if (approval.canPause) return { ...inner, execute: undefined };
    return {
      ...inner,
      execute: async (input: unknown, options: { toolCallId: string }) => {
        const error = new ApprovalUnavailableError(call.exposedName);
        call.recorder.recordCall({ ...declinedRecord(call, options.toolCallId, input, error.message), decision: { outcome: "failed", by: "user" } });
        throw error;
      },
    } as Tool;
  }
  const execute = inner.execute;
  if (!execute) return inner;
  return {
    ...inner,
    execute: async (input: unknown, options: Parameters<typeof execute>[1]) => {
      const args = argumentsText(input);
      const started = Date.now();
      const reply = await askWithTimeout(
        () => askUser({ kind: "approval", message: approvalMessage(call.exposedName, args), server: call.server, tool: call.tool, arguments: args }),
        approval.timeoutMs,
        options.abortSignal,
      );
      const decision: UserDecision = { outcome: approvalOutcome(reply), by: "user" };
      if (decision.outcome !== "approved") {
        const reason = declineReason(decision.outcome, approval.timeoutMs);
        call.recorder.recordCall({ ...declinedRecord(call, options.toolCallId, input, reason), elapsedMs: Date.now() - started, decision });
        throw new ToolCallDeclinedError(call.exposedName, reason);
      }
      try {
        return await execute(input, options);
      } finally {
        call.recorder.markDecision(options.toolCallId, decision);
      }
    },
  } as Tool;
}

/** What the user is shown: the tool and its arguments as the model sent them. */
export function approvalMessage(exposedName: string, args: string): string {
  return `The expert wants to call ${exposedName} with these arguments:\n${args}\nAllow this call?`;
}

export function argumentsText(input: unknown): string {
  try {
    return rawPreview(JSON.stringify(input) ?? "null", TRACE_BOUNDS.toolArguments);
  } catch {
    return '"[not serialisable]"';
  }
}

export type AskResult = UserReply | { action: "timeout" } | { action: "failed"; message: string };

/**
 * The human's reply, or a timeout after `timeoutMs`. A run's abort (cancel, wall clock)
 * propagates; a prompter that fails (the client refused the request) is a failed decision.
 */
export async function askWithTimeout(ask: () => Promise<UserReply>, timeoutMs: number, signal: AbortSignal | undefined): Promise<AskResult> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let onAbort: (() => void) | undefined;
  const timeout = new Promise<AskResult>((resolve) => {
    timer = setTimeout(() => resolve({ action: "timeout" }), timeoutMs);
  });
  const aborted = new Promise<never>((_resolve, reject) => {
    if (!signal) return;
    onAbort = () => reject(signal.reason);
    if (signal.aborted) onAbort();
    else signal.addEventListener("abort", onAbort, { once: true });
  });
  aborted.catch(() => undefined);
  const asked = ask().then(
    (reply): AskResult => reply,
    (error: unknown): AskResult => ({ action: "failed", message: error instanceof Error ? error.message : String(error) }),
  );
  try {
    return await Promise.race([asked, timeout, aborted]);
  } finally {
    if (timer !== undefined) clearTimeout(timer);
    if (onAbort) signal?.removeEventListener("abort", onAbort);
  }
}

function approvalOutcome(reply: AskResult): UserDecision["outcome"] {
  switch (reply.action) {
    case "accept":
      return reply.approve === true ? "approved" : "declined";
    case "decline":
      return "declined";
    case "cancel":
      return "cancelled";
    case "timeout":
      return "timed_out";
    case "failed":
      return "failed";
  }
}

export function declineReason(outcome: UserDecision["outcome"], timeoutMs: number): string {
  switch (outcome) {
    case "timed_out":
      return `the user did not answer within ${Math.round(timeoutMs / 1000)} s`;
    case "cancelled":
      return "the user dismissed the request without deciding";
    case "failed":
      return "the client could not ask the user";
    default:
      return "the user declined it";
  }
}

function declinedRecord(call: GatedCall, toolCallId: string, input: unknown, reason: string): ToolCallRecord {
  return {
    toolCallId,
    name: call.exposedName,
    status: "declined",
    bytes: 0,
    elapsedMs: 0,
    error: `not executed: ${reason}`,
    server: call.server,
    tool: call.tool,
    args: argumentsText(input),
  };
}
