import { describe, expect, it } from "vitest";
import { runExpert } from "../../../src/experts/run/run-expert";
import { makeExpert, makePolicy } from "../../support/expert-fixture";
import { FakeToolSource, textResult } from "../../support/fake-tool-source";
import { scriptedModel } from "../../support/workers/scripted-model";

const outputSchema = {
  type: "object",
  properties: { answer: { type: "string" }, sources: { type: "array", items: { type: "string" } } },
  required: ["answer", "sources"],
  additionalProperties: false,
};
const source = () => new FakeToolSource({ docs: { search: { result: textResult("readme#budgets: loops are bounded") }, read: {} } });
const run = (model: ReturnType<typeof scriptedModel>) =>
  runExpert({ expert: makeExpert({ output_schema: outputSchema }), toolPolicy: makePolicy(), args: { query: "q" }, model, tools: source() });

describe("runExpert with an output_schema", () => {
  it("returns the final JSON answer as a validated value and tells the model the schema", async () => {
    const answer = { answer: "Loops are bounded.", sources: ["readme#budgets"] };
    const model = scriptedModel([{ calls: [{ name: "docs__search", input: { q: "budgets" } }] }, { text: JSON.stringify(answer, null, 2) }]);
    const result = await run(model);
    expect(result.outcome).toBe("ok");
    expect(result.structured).toEqual(answer);
    expect(JSON.parse(result.text)).toEqual(answer);
    const system = JSON.stringify(model.doGenerateCalls[0]?.prompt.filter((m) => m.role === "system"));
    expect(system).toContain("matches the JSON Schema");
    expect(system).toContain("additionalProperties");
  });

  it("accepts the JSON inside a Markdown code fence", async () => {
    const model = scriptedModel([{ text: '```json\n{"answer": "fenced", "sources": []}\n```' }]);
    const result = await run(model);
    expect(result.structured).toEqual({ answer: "fenced", sources: [] });
  });

  it("is an error naming the mismatch when the JSON does not match", async () => {
    const model = scriptedModel([{ text: '{"answer": 42, "sources": []}' }]);
    const result = await run(model);
    expect(result.outcome).toBe("error");
    expect(result.structured).toBeUndefined();
    expect(result.error?.kind).toBe("output-schema-mismatch");
    expect(result.text).toMatch(/^Expert "research" returned no structured result: the final answer does not match output_schema \(#\/answer: /);
    expect(result.text).toContain('"number"');
  });

  it("is an error saying so when the final answer is prose", async () => {
    const result = await run(scriptedModel([{ text: "Loops are bounded." }]));
    expect(result.outcome).toBe("error");
    expect(result.text).toContain("the final answer is not JSON");
  });

  it("leaves experts without an output_schema as they were", async () => {
    const result = await runExpert({
      expert: makeExpert(),
      toolPolicy: makePolicy(),
      args: { query: "q" },
      model: scriptedModel([{ text: '{"a": 1}' }]),
      tools: source(),
    });
    expect(result.outcome).toBe("ok");
    expect(result.text).toBe('{"a": 1}');
    expect(result.structured).toBeUndefined();
  });
});
