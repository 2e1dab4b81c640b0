import { describe, expect, it } from "vitest";
import { buildUserMessage } from "../../../src/experts/run/open-run";
import { describeStep } from "../../../src/experts/run/step-progress";

describe("buildUserMessage and describeStep", () => {
  it("renders a query with the other arguments below it", () => {
    expect(buildUserMessage({ query: "why?", ide: { file: "a.ts" } })).toBe('why?\n\nide: {\n  "file": "a.ts"\n}');
    expect(buildUserMessage({ topic: "x" })).toBe("topic: x");
  });

  it("describes a step by the tools it calls", () => {
    expect(describeStep([{ toolName: "a__b" }, { toolName: "a__b" }, { toolName: "c__d" }])).toBe("calling a__b, c__d");
    expect(describeStep([{ toolName: "a__b", dynamic: true, invalid: true, error: new Error("bad json") }])).toBe("refused a__b (malformed arguments)");
    expect(describeStep([])).toBe("writing the answer");
  });
});
