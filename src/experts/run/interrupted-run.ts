import type { ExpertConfig } from "../../catalog/catalog-schema";
import { SlipsnisseError } from "../../errors";
import type { RunSignals } from "./abort";
import { describeModelError } from "../models/describe-model-error";
import type { TrackedModel } from "../models/model-fault-tracker";
import { ModelRetryStoppedError } from "../models/model-retry";
import type { RunEnd } from "./run-end";

export type RunEndFields = Omit<RunEnd, "userMessage" | "notes">;

/**
 * How a run whose model call or tool call threw ends: the caller's cancel wins, then the wall
 * clock (naming the provider when it was failing and being retried), then the error itself
 * (a retry stopped because its wait would pass the deadline also counts as the clock running out).
 * `gathered` is the answer a timed-out run returns from what it had.
 */
export function interruptedRunEnd(
  error: unknown,
  signals: RunSignals,
  tracked: TrackedModel,
  expert: ExpertConfig,
  gathered: () => string,
): RunEndFields {
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
