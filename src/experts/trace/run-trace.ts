import type { StepRecord, ToolCallRecord } from "../core/run-types";
import { excerpt, TRACE_BOUNDS } from "../core/trace-excerpt";
import type { Redact } from "../core/trace-excerpt";

/**
 * The steps as the run record keeps them: every text redacted and cut to its bound, and each
 * step's model call with the retries the traced model counted (one successful call per step).
 */
export function tracedSteps(steps: readonly StepRecord[], retriesPerCall: readonly number[], redact: Redact): StepRecord[] {
  return steps.map((step, index) => ({
    ...step,
    text: excerpt(step.text, redact, TRACE_BOUNDS.stepText),
    toolCalls: step.toolCalls.map((call) => tracedCall(call, redact)),
    ...(step.model ? { model: { ...step.model, retries: retriesPerCall[index] ?? step.model.retries } } : {}),
  }));
}

function tracedCall(call: ToolCallRecord, redact: Redact): ToolCallRecord {
  return {
    ...call,
    ...(call.error === undefined ? {} : { error: excerpt(call.error, redact, TRACE_BOUNDS.toolResult) }),
    ...(call.args === undefined ? {} : { args: excerpt(call.args, redact, TRACE_BOUNDS.toolArguments) }),
    ...(call.result === undefined ? {} : { result: excerpt(call.result, redact, TRACE_BOUNDS.toolResult) }),
  };
}
