export interface BackoffPolicy {
  /** Delay after the second consecutive failure; doubles with each further one. */
  baseMs: number;
  maxMs: number;
  /** 0..1 share of the delay that is randomised, so sessions do not retry in lockstep. */
  jitter: number;
}

export const DEFAULT_BACKOFF: BackoffPolicy = { baseMs: 1_000, maxMs: 60_000, jitter: 0.5 };

let testBackoff: BackoffPolicy | undefined;

/**
 * Test seam: the back-off of pools built without one (the ExpertSessions'), so a workerd test can
 * hold users' sessions backing off for longer than the test runs. Only code can set it, and
 * `defaultBackoff` honours it only when ENVIRONMENT is "test".
 */
export function setDefaultBackoffForTests(policy: BackoffPolicy | undefined): void {
  testBackoff = policy;
}

export function defaultBackoff(env: Pick<Env, "ENVIRONMENT">): BackoffPolicy {
  return env.ENVIRONMENT === "test" && testBackoff !== undefined ? testBackoff : DEFAULT_BACKOFF;
}

/**
 * How long to withhold the next connect after `failures` consecutive failures. The first
 * failure is retried at once by the next call (a blip should cost one call, not a minute);
 * from the second on, the delay grows exponentially up to maxMs.
 */
export function backoffDelayMs(failures: number, policy: BackoffPolicy, random: () => number = Math.random): number {
  if (failures < 2) return 0;
  const exponential = Math.min(policy.maxMs, policy.baseMs * 2 ** Math.min(failures - 2, 30));
  return Math.round(exponential * (1 - policy.jitter * random()));
}
