/**
 * When to retry a failed model call, and after how long: a pure function of the attempt, the
 * provider's headers, the time left in the run and a random number, so every rule is tested
 * without clocks.
 *
 * - `retry-after-ms` (OpenAI's, milliseconds) wins over `retry-after` (seconds or an HTTP date,
 *   RFC 9110 section 10.2.3). Retrying earlier than the provider asked would only be refused
 *   again, so a wait that does not fit in the time left ends the retries at once.
 * - Without those headers: exponential backoff from RETRY_BASE_MS with "equal jitter" (a random
 *   point in the upper half of the doubling window), so parallel runs hit by the same rate limit
 *   do not retry in lockstep, while each wait still grows.
 * - Never a wait that leaves less than MIN_ATTEMPT_MS of the run for the retried call itself.
 */

/** The first backoff window's upper end; the first wait is 200-400 ms. */
export const RETRY_BASE_MS = 400;
export const RETRY_MAX_BACKOFF_MS = 8_000;
/** Retries of one model call; the run's deadline usually ends them sooner. */
export const MAX_MODEL_RETRIES = 4;
/** A retry that would have less than this left after its wait is not worth starting. */
export const MIN_ATTEMPT_MS = 250;

export interface RetryContext {
  /** 0 for the first retry of this call. */
  retry: number;
  /** Response headers of the failed attempt, lower-case names. */
  headers: Readonly<Record<string, string | undefined>> | undefined;
  /** Milliseconds until the run's deadline. */
  remainingMs: number;
  /** Epoch milliseconds, for an HTTP-date Retry-After. */
  now: number;
  /** A number in [0, 1). */
  random: number;
}

export type RetryPlan =
  | { retry: true; delayMs: number; basis: "retry-after" | "backoff" }
  | { retry: false; reason: "attempts" | "deadline"; delayMs?: number };

/** The wait the provider asked for, in ms, or undefined when it named none (or nonsense). */
export function retryAfterMs(headers: RetryContext["headers"], now: number): number | undefined {
  const ms = Number.parseFloat(headers?.["retry-after-ms"] ?? "");
  if (Number.isFinite(ms) && ms >= 0) return ms;
  const value = headers?.["retry-after"]?.trim();
  if (!value) return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return Number.parseFloat(value) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** Upper end of the backoff window of this retry. */
export function backoffCeilingMs(retry: number): number {
  return Math.min(RETRY_MAX_BACKOFF_MS, RETRY_BASE_MS * 2 ** retry);
}

export function planRetry(context: RetryContext): RetryPlan {
  if (context.retry >= MAX_MODEL_RETRIES) return { retry: false, reason: "attempts" };
  const asked = retryAfterMs(context.headers, context.now);
  const ceiling = backoffCeilingMs(context.retry);
  const delayMs = asked ?? Math.round(ceiling / 2 + (context.random * ceiling) / 2);
  if (delayMs + MIN_ATTEMPT_MS > context.remainingMs) return { retry: false, reason: "deadline", delayMs };
  return { retry: true, delayMs, basis: asked === undefined ? "backoff" : "retry-after" };
}
