import { describe, expect, it } from "vitest";
import { backoffDelayMs } from "../../src/downstream/connection-backoff";

describe("backoffDelayMs", () => {
  const policy = { baseMs: 1_000, maxMs: 8_000, jitter: 0 };

  it("retries at once after a single failure, then doubles up to the cap", () => {
    expect([1, 2, 3, 4, 5, 6, 50].map((failures) => backoffDelayMs(failures, policy))).toEqual([0, 1_000, 2_000, 4_000, 8_000, 8_000, 8_000]);
  });

  it("jitter only shortens the delay, within its share", () => {
    const jittered = { ...policy, jitter: 0.5 };
    expect(backoffDelayMs(3, jittered, () => 0)).toBe(2_000);
    expect(backoffDelayMs(3, jittered, () => 1)).toBe(1_000);
    expect(backoffDelayMs(3, jittered, () => 0.5)).toBe(1_500);
  });
});
