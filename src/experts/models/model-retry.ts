import { APICallError, wrapLanguageModel } from "ai";
import type { LanguageModel } from "ai";
import { planRetry, type RetryPlan } from "./retry-delay";

/** One retry about to wait, for the run's trace and usage. */
export interface ModelRetry {
  /** 1 for the first retry of a model call. */
  retry: number;
  status: number | undefined;
  delayMs: number;
  basis: "retry-after" | "backoff";
}

export interface RetryOptions {
  /** Epoch ms when the run's wall-clock budget ends. */
  deadline: number;
  /** The run's signal (caller cancel or wall clock): cuts a wait short. */
  signal: AbortSignal;
  onRetry: (retry: ModelRetry) => void;
  random?: () => number;
}

/**
 * Why a failed model call was not retried (again): the last attempt's error, and for a deadline
 * stop the wait that did not fit. describe-model-error.ts reports the inner error; the runner
 * counts a deadline stop as the time budget running out.
 */
export class ModelRetryStoppedError extends Error {
  constructor(
    readonly lastError: unknown,
    readonly reason: Extract<RetryPlan, { retry: false }>["reason"],
    readonly waitMs: number | undefined,
    readonly remainingMs: number,
  ) {
    super(
      reason === "deadline"
        ? `model call not retried: the wait (${waitMs} ms) does not fit in the ${remainingMs} ms left`
        : "model call not retried: too many retries",
      { cause: lastError },
    );
    this.name = "ModelRetryStoppedError";
  }
}

function lowerCaseNames(headers: Record<string, string> | undefined): Record<string, string> | undefined {
  return headers && Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));
}

/** Rate limits, 5xx, timeouts and network failures: what the provider packages mark retryable. */
function isRetryable(error: unknown): error is APICallError {
  return APICallError.isInstance(error) && error.isRetryable;
}

/**
 * Retries failed model calls inside the run's budget (the AI SDK's own retries are off: their
 * flat 2 s, 4 s waits ignored the deadline, so two rate-limited steps outlasted a 4 s budget).
 * When to retry and how long to wait is retry-delay.ts; the wait never passes the deadline and
 * ends at once when the run is cancelled.
 */
export function retryModelCalls(model: LanguageModel, options: RetryOptions): LanguageModel {
  if (typeof model === "string") return model;
  const random = options.random ?? Math.random;
  return wrapLanguageModel({
    model,
    middleware: {
      specificationVersion: "v4",
      wrapGenerate: async ({ doGenerate }) => {
        for (let retry = 0; ; retry++) {
          try {
            return await doGenerate();
          } catch (error) {
            if (!isRetryable(error) || options.signal.aborted) throw error;
            const now = Date.now();
            const remainingMs = options.deadline - now;
            const plan = planRetry({ retry, headers: lowerCaseNames(error.responseHeaders), remainingMs, now, random: random() });
            if (!plan.retry) throw new ModelRetryStoppedError(error, plan.reason, plan.delayMs, remainingMs);
            options.onRetry({ retry: retry + 1, status: error.statusCode, delayMs: plan.delayMs, basis: plan.basis });
            await scheduler.wait(plan.delayMs, { signal: options.signal });
          }
        }
      },
    },
  });
}
