import { describe, expect, it } from "vitest";
import { parseCatalog } from "../../../src/catalog/parse-catalog";
import { defaultSkill, problemsOf, validCatalog } from "./catalog-fixtures";

function withPricing(pricing: unknown): ReturnType<typeof validCatalog> {
  const catalog = validCatalog();
  Object.assign(defaultSkill(catalog), { pricing });
  return catalog;
}

describe("skill pricing", () => {
  it("accepts prices per provider and model, per million tokens in and out", () => {
    const parsed = parseCatalog(withPricing({ google: { "gemini-2.5-flash": { input_per_million: 0.3, output_per_million: 2.5 } } }));
    expect(parsed.ok).toBe(true);
  });

  it.each([
    ["an unknown provider", { openai: { "gpt-4o": { input_per_million: 1, output_per_million: 2 } } }, "$.skills.default.pricing.openai"],
    ["a negative price", { google: { m: { input_per_million: -1, output_per_million: 2 } } }, "$.skills.default.pricing.google.m.input_per_million"],
    ["a missing output price", { google: { m: { input_per_million: 1 } } }, "$.skills.default.pricing.google.m.output_per_million"],
  ])("refuses %s at its JSON path", (_label, pricing, path) => {
    const problems = problemsOf(withPricing(pricing));
    expect(problems.map((problem) => problem.path)).toContain(path);
    for (const problem of problems) expect(problem.fix.length).toBeGreaterThan(0);
  });
});
