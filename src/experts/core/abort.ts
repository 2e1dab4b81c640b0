import { untilAborted } from "../../downstream/abortable";

/**
 * Settles with `promise`, or rejects with the signal's reason as soon as it aborts. The runner
 * wraps the model loop and downstream calls in this because a provider or ToolSource that
 * ignores its signal must still not outlive the run's wall-clock budget.
 */
export function raceWithSignal<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  return untilAborted(promise, signal, () => abortReason(signal));
}

function abortReason(signal: AbortSignal | undefined): unknown {
  return signal?.reason ?? new DOMException("The operation was aborted.", "AbortError");
}

export interface RunSignals {
  /** Aborts on the caller's cancel or the run's wall-clock budget. */
  signal: AbortSignal;
  timedOut(): boolean;
  cancelled(): boolean;
}

export function runSignals(timeoutMs: number, callerSignal: AbortSignal | undefined): RunSignals {
  const timeout = AbortSignal.timeout(timeoutMs);
  const signal = callerSignal ? AbortSignal.any([callerSignal, timeout]) : timeout;
  return {
    signal,
    // The caller's cancel wins when both fired: the caller is gone and wants no answer.
    cancelled: () => callerSignal?.aborted === true,
    timedOut: () => timeout.aborted && callerSignal?.aborted !== true,
  };
}
