import { describe, expect, it } from "vitest";
import { formatProblems } from "../../../src/catalog/catalog-problems";
import { defaultSkill, firstExpert, problemAt, problemsOf, validCatalog } from "./catalog-fixtures";

describe("zod issues become path + message + fix", () => {
  it("an unknown key names the allowed keys and the likely typo", () => {
    const catalog = validCatalog();
    firstExpert(catalog).sytem_prompt = "You are terse.";
    const problem = problemAt(problemsOf(catalog), "$.skills.default.experts[0].sytem_prompt");
    expect(problem.message).toContain("unknown key `sytem_prompt`");
    expect(problem.fix).toContain("did you mean `system_prompt`?");
    expect(problem.fix).toContain("internal_tools");
  });

  it("a wrong type says what was expected and what was found", () => {
    const catalog = validCatalog();
    firstExpert(catalog).description = 42;
    const problem = problemAt(problemsOf(catalog), "$.skills.default.experts[0].description");
    expect(problem.message).toBe("expected a string, got a number");
    expect(problem.fix).toBe("write a string here");
  });

  it("a missing required field is reported at its own path", () => {
    const catalog = validCatalog();
    delete firstExpert(catalog).description;
    expect(problemAt(problemsOf(catalog), "$.skills.default.experts[0].description").message).toBe("`description` is required");
  });

  it("a bad URL (wrong scheme) asks for an absolute http(s) URL", () => {
    const catalog = validCatalog();
    defaultSkill(catalog).servers = { docs: { url: "ftp://docs.example.com/mcp" } };
    const problem = problemAt(problemsOf(catalog), "$.skills.default.servers.docs.url");
    expect(problem.message).toContain("not a valid http(s) URL");
    expect(problem.fix).toContain("https://");
  });

  it("out-of-range numbers give the bound and the value found", () => {
    const catalog = validCatalog();
    firstExpert(catalog).budget = { max_steps: 0, timeout_ms: 10_000_000 };
    const problems = problemsOf(catalog);
    expect(problemAt(problems, "$.skills.default.experts[0].budget.max_steps")).toMatchObject({
      message: "must be at least 1 (got 0)",
      fix: "use a number at least 1",
    });
    expect(problemAt(problems, "$.skills.default.experts[0].budget.timeout_ms").message).toBe("must be at most 600000 (got 10000000)");
  });

  it("a pattern violation says in words what the pattern allows", () => {
    const catalog = validCatalog();
    firstExpert(catalog).api_key_secret = "my-key";
    const problem = problemAt(problemsOf(catalog), "$.skills.default.experts[0].api_key_secret");
    expect(problem.message).toContain("UPPER_SNAKE_CASE");
    expect(problem.message).not.toContain("/^");
  });

  it("an enum value close to an option suggests it", () => {
    const catalog = validCatalog();
    firstExpert(catalog).provider = "openai";
    expect(problemAt(problemsOf(catalog), "$.skills.default.experts[0].provider").fix).toBe('did you mean "openai-compatible"?');
  });

  it("reports every problem at once, and formats one line per problem", () => {
    const catalog = { ...validCatalog(), extra: true };
    firstExpert(catalog).description = "";
    defaultSkill(catalog).servers = { docs: { url: "nope", call_timeout_ms: 5 } };
    const problems = problemsOf(catalog);
    expect(problems.map((p) => p.path)).toEqual(
      expect.arrayContaining([
        "$.extra",
        "$.skills.default.experts[0].description",
        "$.skills.default.servers.docs.url",
        "$.skills.default.servers.docs.call_timeout_ms",
      ]),
    );
    const lines = formatProblems(problems).split("\n");
    expect(lines).toHaveLength(problems.length);
    expect(lines).toContain("$.skills.default.experts[0].description — must not be empty. Fix: write a non-empty text");
  });

  it("quotes keys that are not identifiers in the path", () => {
    const catalog = validCatalog();
    defaultSkill(catalog).servers = { "my docs": { url: "nope" } };
    expect(problemsOf(catalog).map((p) => p.path)).toContain('$.skills.default.servers["my docs"].url');
  });
});
