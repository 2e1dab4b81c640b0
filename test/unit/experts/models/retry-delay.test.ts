import { describe, expect, it } from "vitest";
import { MAX_MODEL_RETRIES, MIN_ATTEMPT_MS, backoffCeilingMs, planRetry, retryAfterMs, type RetryContext } from "../../../../src/experts/models/retry-delay";

const NOW = Date.parse("2026-11-23T12:00:00Z");
const context = (fields: Partial<RetryContext>): RetryContext => ({ retry: 0, headers: undefined, remainingMs: 60_000, now: NOW, random: 0.5, ...fields });

describe("retryAfterMs", () => {
  it("reads retry-after-ms, then retry-after in seconds, then as an HTTP date", () => {
    expect(retryAfterMs({ "retry-after-ms": "150.5", "retry-after": "9" }, NOW)).toBe(150.5);
    expect(retryAfterMs({ "retry-after": "2" }, NOW)).toBe(2_000);
    expect(retryAfterMs({ "retry-after": "0" }, NOW)).toBe(0);
    expect(retryAfterMs({ "retry-after": new Date(NOW + 3_000).toUTCString() }, NOW)).toBe(3_000);
    expect(retryAfterMs({ "retry-after": new Date(NOW - 3_000).toUTCString() }, NOW)).toBe(0);
  });

  it("ignores absent, negative and unreadable values", () => {
    expect(retryAfterMs(undefined, NOW)).toBeUndefined();
    expect(retryAfterMs({}, NOW)).toBeUndefined();
    expect(retryAfterMs({ "retry-after-ms": "-5" }, NOW)).toBeUndefined();
    expect(retryAfterMs({ "retry-after": "soon" }, NOW)).toBeUndefined();
  });
});

describe("planRetry", () => {
  it("waits what the provider asked when it fits in the time left", () => {
    expect(planRetry(context({ headers: { "retry-after-ms": "300" }, remainingMs: 1_000 }))).toEqual({ retry: true, delayMs: 300, basis: "retry-after" });
    expect(planRetry(context({ headers: { "retry-after": "1" }, remainingMs: 1_000 + MIN_ATTEMPT_MS }))).toEqual({
      retry: true,
      delayMs: 1_000,
      basis: "retry-after",
    });
  });

  it("gives up at once when the asked wait would not leave time for the retried call", () => {
    expect(planRetry(context({ headers: { "retry-after": "30" }, remainingMs: 4_000 }))).toEqual({ retry: false, reason: "deadline", delayMs: 30_000 });
    expect(planRetry(context({ headers: { "retry-after-ms": "900" }, remainingMs: 900 + MIN_ATTEMPT_MS - 1 }))).toMatchObject({
      retry: false,
      reason: "deadline",
    });
  });

  it("backs off exponentially from a few hundred ms, with jitter in the upper half of each window", () => {
    expect(backoffCeilingMs(0)).toBe(400);
    const windows = [0, 1, 2, 3].map((retry) => [0, 0.999999].map((random) => planRetry(context({ retry, random }))));
    expect(windows.map(([low, high]) => [low?.retry && low.delayMs, high?.retry && high.delayMs])).toEqual([
      [200, 400],
      [400, 800],
      [800, 1_600],
      [1_600, 3_200],
    ]);
    expect(planRetry(context({ random: 0.25 }))).toEqual({ retry: true, delayMs: 250, basis: "backoff" });
  });

  it("never plans a wait past the deadline, and stops after MAX_MODEL_RETRIES", () => {
    expect(planRetry(context({ retry: 3, remainingMs: 2_000 }))).toMatchObject({ retry: false, reason: "deadline" });
    expect(planRetry(context({ remainingMs: 100 }))).toMatchObject({ retry: false, reason: "deadline" });
    expect(planRetry(context({ retry: MAX_MODEL_RETRIES }))).toEqual({ retry: false, reason: "attempts" });
    expect(backoffCeilingMs(20)).toBe(8_000);
  });
});
