import { describe, expect, it } from "vitest";
import { runCostUsd } from "../../../../src/experts/limits/run-cost";

describe("run cost for cost limits", () => {
  const priced = { pricing: { google: { "gemini-2.5-flash": { input_per_million: 0.3, output_per_million: 2.5 } } } };

  it("prices a run at the skill's per-million prices", () => {
    expect(runCostUsd(priced, "google", "gemini-2.5-flash", 1_000_000, 200_000)).toBeCloseTo(0.8, 10);
  });

  it("is 0 when the model, the provider or the whole pricing is unknown: cost limits count priced runs only", () => {
    expect(runCostUsd(priced, "google", "gemini-2.5-pro", 1000, 1000)).toBe(0);
    expect(runCostUsd(priced, "workers-ai", "gemini-2.5-flash", 1000, 1000)).toBe(0);
    expect(runCostUsd({}, "google", "gemini-2.5-flash", 1000, 1000)).toBe(0);
    expect(runCostUsd(priced, "google", undefined, 1000, 1000)).toBe(0);
  });
});
