import { describe, expect, it } from "vitest";
import { lineDiff } from "../../../src/dashboard/line-diff";

describe("lineDiff", () => {
  it("keeps common lines and shows a changed line as removed, then added", () => {
    expect(lineDiff("a\nb\nc", "a\nB\nc")).toEqual([
      { kind: "same", text: "a" },
      { kind: "removed", text: "b" },
      { kind: "added", text: "B" },
      { kind: "same", text: "c" },
    ]);
  });

  it("shows pure insertions and deletions at either end", () => {
    expect(lineDiff("b", "a\nb\nc").map((line) => line.kind)).toEqual(["added", "same", "added"]);
    expect(lineDiff("a\nb\nc", "b").map((line) => line.kind)).toEqual(["removed", "same", "removed"]);
  });

  it("gives up alignment above its bound instead of running quadratic", () => {
    const big = Array.from({ length: 3_001 }, (_, index) => String(index)).join("\n");
    const lines = lineDiff(big, "x");
    expect(lines).toHaveLength(3_002);
    expect(lines.at(-1)).toEqual({ kind: "added", text: "x" });
  });
});
