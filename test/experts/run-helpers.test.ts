import { describe, expect, it } from "vitest";
import { truncateUtf8 } from "../../src/experts/tools/result-truncation";
import { describeStep } from "../../src/experts/run/step-progress";
import { modelSafeToolName } from "../../src/experts/tools/tool-names";
import { isToolAllowed } from "../../src/experts/tool-policy";
import { buildUserMessage } from "../../src/experts/run/user-message";

describe("truncateUtf8", () => {
  it("keeps short text as is", () => {
    expect(truncateUtf8("abc", 3)).toEqual({ text: "abc", truncated: false, totalBytes: 3, shownBytes: 3 });
  });

  it("never splits a multi-byte character", () => {
    const cut = truncateUtf8("a😀b", 3); // a = 1 byte, 😀 = 4 bytes
    expect(cut.shownBytes).toBe(1);
    expect(cut.text).toBe("a\n[… truncated: showed 1 of 6 bytes]");
  });
});

describe("isToolAllowed", () => {
  const policy = { allowed: ["docs__*", "web__fetch"], blocked: ["*__delete*"] };
  it.each([
    ["docs__search", true],
    ["docs__delete_page", false],
    ["web__fetch", true],
    ["web__fetchall", false],
    ["admin__wipe", false],
  ])("%s → %s", (name, allowed) => {
    expect(isToolAllowed(name, policy)).toBe(allowed);
  });

  it("treats regex characters in patterns literally", () => {
    expect(isToolAllowed("docs__a.b", { allowed: ["docs__a.b"], blocked: [] })).toBe(true);
    expect(isToolAllowed("docs__axb", { allowed: ["docs__a.b"], blocked: [] })).toBe(false);
  });
});

describe("modelSafeToolName", () => {
  it("rewrites characters providers reject and keeps names unique", () => {
    const taken = new Set<string>();
    expect(modelSafeToolName("docs__pages.get", taken)).toBe("docs__pages_get");
    expect(modelSafeToolName("docs__pages_get", taken)).toBe("docs__pages_get_2");
    expect(modelSafeToolName(`s__${"x".repeat(80)}`, taken)).toHaveLength(64);
  });
});

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
