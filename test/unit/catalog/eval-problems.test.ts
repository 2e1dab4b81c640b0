import { describe, expect, it } from "vitest";
import { parseCatalog } from "../../../src/catalog/parse-catalog";
import { firstExpert, problemAt, problemsOf, validCatalog } from "./catalog-fixtures";

const EXPERT = "$.skills.default.experts[0]";

function withEvals(evals: unknown[]) {
  const catalog = validCatalog();
  firstExpert(catalog).evals = evals;
  return catalog;
}

describe("expert evals in the catalog", () => {
  it("accepts every assertion kind, with defaults filled in", () => {
    const catalog = withEvals([
      {
        name: "finds_zod",
        arguments: { query: "schema validation" },
        assert: [
          { type: "contains", value: "zod" },
          { type: "matches", pattern: "^Z", flags: "i" },
          { type: "json_schema", schema: { type: "object", required: ["answer"] } },
          { type: "calls_tool", tool: "docs__*" },
          { type: "not_calls_tool", tool: "fs__write*" },
          { type: "max_steps", value: 3 },
          { type: "max_tokens", value: 5_000 },
          { type: "max_cost", value: 0.01 },
          { type: "rubric", criteria: "Recommends a maintained library." },
        ],
      },
    ]);
    firstExpert(catalog).eval_settings = { max_cost: 0.5, judge: { provider: "google", model: "gemini-2.5-flash" } };
    const parsed = parseCatalog(catalog);
    expect(parsed.ok).toBe(true);
    const expert = parsed.ok ? parsed.catalog.skills.default?.experts[0] : undefined;
    expect(expert?.evals?.[0]?.approve).toBe(false);
    expect(expert?.evals?.[0]?.assert.slice(0, 2)).toMatchObject([{ type: "contains", case_sensitive: false }, { flags: "i" }]);
    expect(expert?.eval_settings).toEqual({ max_cost: 0.5, concurrency: 2, gate: false, judge: { provider: "google", model: "gemini-2.5-flash" } });
  });

  it("names each broken field by its JSON path with a fix", () => {
    const problems = problemsOf(
      withEvals([
        { name: "one", arguments: { question: "wrong key" }, assert: [{ type: "contain", value: "x" }] },
        {
          name: "one",
          arguments: { query: "q" },
          assert: [
            { type: "matches", pattern: "(unclosed" },
            { type: "calls_tool", tool: "web__search" },
            { type: "max_steps", value: 2, tool: "x" },
            { type: "json_schema", schema: { type: "string" } },
          ],
        },
        { name: "empty", arguments: { query: "q" }, assert: [] },
        { name: "graded", arguments: { query: "q" }, assert: [{ type: "rubric", criteria: "Names a library." }] },
      ]),
    );
    expect(problemAt(problems, `${EXPERT}.evals[0].arguments`).message).toContain("do not match the expert's `arguments` schema");
    const type = problemAt(problems, `${EXPERT}.evals[0].assert[0].type`);
    expect(type.message).toContain("unknown assertion type `contain`");
    expect(type.fix).toContain("did you mean `contains`?");
    expect(problemAt(problems, `${EXPERT}.evals[1].name`).message).toContain("already used by eval [0]");
    expect(problemAt(problems, `${EXPERT}.evals[1].assert[0].pattern`).message).toContain("not a valid regular expression");
    expect(problemAt(problems, `${EXPERT}.evals[1].assert[1].tool`).message).toContain("matches none of the tools this expert may call");
    expect(problemAt(problems, `${EXPERT}.evals[1].assert[2].tool`).message).toContain("unknown key `tool` for a `max_steps` assertion");
    expect(problemAt(problems, `${EXPERT}.evals[1].assert[3].schema.type`).message).toContain("must be a JSON Schema object schema");
    expect(problemAt(problems, `${EXPERT}.evals[2].assert`).message).toContain("at least 1");
    const rubric = problemAt(problems, `${EXPERT}.evals[3].assert[0]`);
    expect(rubric.message).toContain("needs a judge model");
    expect(rubric.fix).toContain("eval_settings.judge");
    // No duplicate, vaguer zod report beside a finding that explains the same path.
    expect(problems.filter((problem) => problem.path.startsWith(`${EXPERT}.evals[0].assert[0]`))).toHaveLength(1);
  });
});
