import { describe, expect, it } from "vitest";
import { parseCatalog } from "../../../src/catalog/parse-catalog";
import { firstExpert, problemAt, problemsOf, validCatalog } from "./catalog-fixtures";

const EXPERT = "$.skills.default.experts[0]";
const answerSchema = { type: "object", properties: { answer: { type: "string" } }, required: ["answer"] };

describe("expert mode and output_schema checks", () => {
  it("defaults to synthesize without an output schema, and accepts route and an object output_schema", () => {
    const plain = parseCatalog(validCatalog());
    expect(plain.ok && plain.catalog.skills.default?.experts[0]).toMatchObject({ mode: "synthesize" });
    expect(plain.ok && plain.catalog.skills.default?.experts[0]?.output_schema).toBeUndefined();

    const route = validCatalog();
    firstExpert(route).mode = "route";
    expect(parseCatalog(route).ok).toBe(true);

    const structured = validCatalog();
    firstExpert(structured).output_schema = answerSchema;
    const parsed = parseCatalog(structured);
    expect(parsed.ok && parsed.catalog.skills.default?.experts[0]?.output_schema).toEqual(answerSchema);
  });

  it("ask_back is refused with route and with output_schema, naming the field and the fix", () => {
    const route = validCatalog();
    firstExpert(route).mode = "route";
    firstExpert(route).ask_back = true;
    expect(problemAt(problemsOf(route), `${EXPERT}.ask_back`).message).toContain('`ask_back` cannot be used with `mode: "route"`');

    const structured = validCatalog();
    firstExpert(structured).output_schema = answerSchema;
    firstExpert(structured).ask_back = true;
    const problem = problemAt(problemsOf(structured), `${EXPERT}.ask_back`);
    expect(problem.message).toContain("`ask_back` cannot be used with `output_schema`");
    expect(problem.fix).toContain("remove `ask_back`");

    const plain = validCatalog();
    firstExpert(plain).ask_back = true;
    const parsed = parseCatalog(plain);
    expect(parsed.ok && parsed.catalog.skills.default?.experts[0]).toMatchObject({ ask_back: true, ask_back_ttl_ms: 900_000 });
  });

  it("accepts code mode, and refuses ask_back and output_schema with it at their paths", () => {
    const code = validCatalog();
    firstExpert(code).mode = "code";
    const parsed = parseCatalog(code);
    expect(parsed.ok && parsed.catalog.skills.default?.experts[0]).toMatchObject({ mode: "code" });

    const asking = validCatalog();
    firstExpert(asking).mode = "code";
    firstExpert(asking).ask_back = true;
    expect(problemAt(problemsOf(asking), `${EXPERT}.ask_back`).message).toContain('`ask_back` cannot be used with `mode: "code"`');
    const structured = validCatalog();
    firstExpert(structured).mode = "code";
    firstExpert(structured).output_schema = answerSchema;
    expect(problemAt(problemsOf(structured), `${EXPERT}.output_schema`).fix).toContain('set `mode` to `"synthesize"`');
  });

  it("an unknown mode is refused", () => {
    const catalog = validCatalog();
    firstExpert(catalog).mode = "orchestrate";
    expect(problemsOf(catalog).map((p) => p.path)).toContain(`${EXPERT}.mode`);
  });

  it("output_schema must be an object schema", () => {
    const catalog = validCatalog();
    firstExpert(catalog).output_schema = { type: "array", items: { type: "string" } };
    const problem = problemAt(problemsOf(catalog), `${EXPERT}.output_schema.type`);
    expect(problem.message).toContain("`output_schema` must be a JSON Schema object schema");
    expect(problem.fix).toContain('"type": "object"');
  });

  it("output_schema that does not compile names the broken keyword or the validator's complaint", () => {
    const catalog = validCatalog();
    firstExpert(catalog).output_schema = { type: "object", properties: { n: { type: "numbr" }, r: { $ref: "https://x.example/s" } } };
    const problems = problemsOf(catalog);
    expect(problemAt(problems, `${EXPERT}.output_schema.properties.n.type`).message).toContain("`numbr` is not a JSON Schema type");
    expect(problemAt(problems, `${EXPERT}.output_schema.properties.r.$ref`).message).toContain("does not point into this schema");

    const duplicate = validCatalog();
    firstExpert(duplicate).output_schema = {
      type: "object",
      properties: { a: { $id: "https://x.example/s", type: "string" }, b: { $id: "https://x.example/s", type: "string" } },
    };
    expect(problemAt(problemsOf(duplicate), `${EXPERT}.output_schema`).message).toContain("`output_schema` does not compile");
  });

  it("route with an output_schema is refused with a fix", () => {
    const catalog = validCatalog();
    firstExpert(catalog).mode = "route";
    firstExpert(catalog).output_schema = answerSchema;
    const problem = problemAt(problemsOf(catalog), `${EXPERT}.output_schema`);
    expect(problem.message).toContain("returns the downstream tool's result as is");
    expect(problem.fix).toContain('"synthesize"');
  });
});
