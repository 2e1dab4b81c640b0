import { describe, expect, it } from "vitest";
import { globToRegExp, isToolAllowed, modelSafeToolName } from "../../../src/experts/tools/tool-names";

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

describe("globToRegExp", () => {
  it("compiles a pattern once and gives the same answers from the shared instance every time", () => {
    const pattern = globToRegExp("docs__se?rch*");
    expect(globToRegExp("docs__se?rch*")).toBe(pattern);
    // A shared RegExp with state (a `g` flag) would alternate between true and false here.
    for (let i = 0; i < 3; i += 1) {
      expect(pattern.test("docs__search_all")).toBe(true);
      expect(pattern.test("docs__seXrch")).toBe(true);
      expect(pattern.test("web__search")).toBe(false);
    }
    expect(globToRegExp("docs__se?rch")).not.toBe(pattern);
  });
});
