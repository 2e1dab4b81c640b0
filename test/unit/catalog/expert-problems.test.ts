import { describe, expect, it } from "vitest";
import { defaultSkill, firstExpert, problemAt, problemsOf, validCatalog } from "./catalog-fixtures";

const EXPERT = "$.skills.default.experts[0]";

describe("expert and skill checks", () => {
  it("an expert name MCP clients would reject gets a sanitized name", () => {
    const catalog = validCatalog();
    firstExpert(catalog).name = "research dependency!";
    const problem = problemAt(problemsOf(catalog), `${EXPERT}.name`);
    expect(problem.message).toContain("rejected by MCP clients");
    expect(problem.fix).toBe("rename it to `research_dependency`");
  });

  it("duplicate expert names in one skill are reported at the second", () => {
    const catalog = validCatalog();
    const skill = defaultSkill(catalog);
    skill.experts = [firstExpert(catalog), { ...firstExpert(catalog) }];
    const problem = problemAt(problemsOf(catalog), "$.skills.default.experts[1].name");
    expect(problem.message).toContain("already used by expert [0]");
    expect(problem.fix).toContain("research_dependency_2");
  });

  it("internal_tools naming an undefined server lists the defined ones", () => {
    const catalog = validCatalog();
    firstExpert(catalog).internal_tools = { search: ["query"] };
    const problem = problemAt(problemsOf(catalog), `${EXPERT}.internal_tools.search`);
    expect(problem.message).toContain("does not define");
    expect(problem.fix).toContain("`docs`, `fs`");
  });

  it("an internal tool name with `__` suggests the bare tool name", () => {
    const catalog = validCatalog();
    firstExpert(catalog).internal_tools = { docs: ["docs__search", "a__b"] };
    const problems = problemsOf(catalog);
    expect(problemAt(problems, `${EXPERT}.internal_tools.docs[0]`).fix).toContain("write `search`");
    expect(problemAt(problems, `${EXPERT}.internal_tools.docs[1]`).fix).toContain("own name");
  });

  it("arguments must be an object schema", () => {
    const catalog = validCatalog();
    firstExpert(catalog).arguments = { type: "string" };
    const problem = problemAt(problemsOf(catalog), `${EXPERT}.arguments.type`);
    expect(problem.fix).toContain('"type": "object"');
  });

  it("arguments that do not compile name the broken keyword", () => {
    const catalog = validCatalog();
    firstExpert(catalog).arguments = {
      type: "object",
      properties: { q: { type: "strng", pattern: "([a-z" }, r: { $ref: "#/$defs/missing" } },
      required: "q",
    };
    const problems = problemsOf(catalog);
    expect(problemAt(problems, `${EXPERT}.arguments.properties.q.type`).message).toContain("`strng` is not a JSON Schema type");
    expect(problemAt(problems, `${EXPERT}.arguments.properties.q.pattern`).message).toContain("not a valid regular expression");
    expect(problemAt(problems, `${EXPERT}.arguments.properties.r.$ref`).fix).toContain("#/$defs/");
    expect(problemAt(problems, `${EXPERT}.arguments.required`).fix).toContain('["query"]');
  });

  it("reports what @cfworker/json-schema itself refuses to compile", () => {
    const catalog = validCatalog();
    // Two subschemas claiming the same $id: the validator's dereference step throws.
    firstExpert(catalog).arguments = {
      type: "object",
      properties: { a: { $id: "https://x.example/s", type: "string" }, b: { $id: "https://x.example/s", type: "string" } },
    };
    const problem = problemAt(problemsOf(catalog), `${EXPERT}.arguments`);
    expect(problem.message).toContain("does not compile");
    expect(problem.message).toContain("Duplicate schema URI");
  });

  it("openai-compatible without base_url", () => {
    const catalog = validCatalog();
    firstExpert(catalog).provider = "openai-compatible";
    expect(problemAt(problemsOf(catalog), `${EXPERT}.base_url`).fix).toContain("http://127.0.0.1:11434/v1");
  });

  it("google or workers-ai (also by default) with a base_url", () => {
    for (const provider of ["google", undefined]) {
      const catalog = validCatalog();
      const expert = firstExpert(catalog);
      if (provider) expert.provider = provider;
      else delete expert.provider;
      expert.base_url = "https://api.example.com/v1";
      expect(problemAt(problemsOf(catalog), `${EXPERT}.base_url`).fix).toContain("remove `base_url`");
    }
  });

  it("skill names must match the skill name pattern", () => {
    const catalog = validCatalog();
    const skill = defaultSkill(catalog);
    catalog.skills = { Research_Docs: skill };
    const problem = problemAt(problemsOf(catalog), "$.skills.Research_Docs");
    expect(problem.fix).toBe("rename it to `research-docs`");
  });
});
