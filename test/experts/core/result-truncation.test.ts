import { describe, expect, it } from "vitest";
import { truncateUtf8 } from "../../../src/experts/core/result-truncation";

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
