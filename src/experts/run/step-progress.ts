import { NoSuchToolError } from "ai";
import type { ExpertRunInput } from "../core/run-types";

/** A tool call as the model emitted it: an unknown name or unparseable input marks it invalid. */
export interface EmittedToolCall {
  toolName: string;
  dynamic?: boolean;
  invalid?: boolean;
  error?: unknown;
}

const NOT_AVAILABLE = "not available to this expert";
const MALFORMED = "malformed arguments";

/**
 * What the sub-agent is doing in a step, for the orchestrator's progress notifications. A call
 * the runner will not execute is reported as refused, never as calling.
 */
export function describeStep(calls: readonly EmittedToolCall[]): string {
  if (calls.length === 0) return "writing the answer";
  const called: string[] = [];
  const refused = new Map<string, string[]>();
  for (const call of calls) {
    const reason = refusalOf(call);
    if (reason === undefined) called.push(call.toolName);
    else refused.set(reason, [...(refused.get(reason) ?? []), call.toolName]);
  }
  const parts = called.length > 0 ? [`calling ${listed(called)}`] : [];
  for (const [reason, names] of refused) parts.push(`refused ${listed(names)} (${reason})`);
  return parts.join("; ");
}

function refusalOf(call: EmittedToolCall): string | undefined {
  if (!call.dynamic || !call.invalid) return undefined;
  return NoSuchToolError.isInstance(call.error) ? NOT_AVAILABLE : MALFORMED;
}

function listed(names: readonly string[]): string {
  const unique = [...new Set(names)];
  const shown = unique.slice(0, 5).join(", ");
  return `${shown}${unique.length > 5 ? ` and ${unique.length - 5} more` : ""}`;
}

/** Progress is best effort: a caller that went away must not end the run. */
export function reportStep(input: ExpertRunInput, step: number, message: string, maxSteps = input.expert.budget.max_steps): void {
  try {
    input.onStep?.({ step, maxSteps, message });
  } catch {
    // The run goes on and is still recorded.
  }
}
