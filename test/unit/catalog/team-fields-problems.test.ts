import { describe, expect, it } from "vitest";
import { parseCatalog } from "../../../src/catalog/parse-catalog";
import { defaultSkill, problemsOf, validCatalog } from "./catalog-fixtures";

const SKILL = "$.skills.default";

function withSkillFields(fields: Record<string, unknown>) {
  const catalog = validCatalog();
  Object.assign(defaultSkill(catalog), fields);
  return catalog;
}

describe("skill limits, retention_days and access", () => {
  it("accepts them and fills retention_days with 30 when absent", () => {
    const plain = parseCatalog(validCatalog());
    expect(plain.ok && plain.catalog.skills.default?.retention_days).toBe(30);
    const full = parseCatalog(
      withSkillFields({
        limits: { per_user: { runs_per_day: 10, tokens_per_day: 5000, cost_per_day_usd: 1.5, runs_in_flight: 2 }, per_skill: { runs_per_day: 100 } },
        retention_days: 7,
        access: { users: ["alice"], groups: ["sre"] },
      }),
    );
    expect(full.ok && full.catalog.skills.default).toMatchObject({
      retention_days: 7,
      access: { users: ["alice"], groups: ["sre"] },
      limits: { per_skill: { runs_per_day: 100 } },
    });
  });

  it("refuses bad values and unknown keys at their JSON paths, each with a fix", () => {
    const problems = problemsOf(
      withSkillFields({ limits: { per_user: { runs_per_day: -1, runs_per_hour: 3 } }, retention_days: 0, access: { users: "alice" } }),
    );
    const paths = problems.map((problem) => problem.path);
    expect(paths).toEqual(expect.arrayContaining([`${SKILL}.limits.per_user.runs_per_day`, `${SKILL}.retention_days`, `${SKILL}.access.users`]));
    expect(problems.some((problem) => problem.path.startsWith(`${SKILL}.limits.per_user`) && problem.message.includes("runs_per_hour"))).toBe(true);
    for (const problem of problems) expect(problem.fix.length).toBeGreaterThan(0);
  });
});
