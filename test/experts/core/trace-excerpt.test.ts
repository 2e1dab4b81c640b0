import { describe, expect, it } from "vitest";
import { excerpt, jsonExcerpt, rawPreview } from "../../../src/experts/core/trace-excerpt";

const SECRET = "s3cret-value-0123456789";
const redact = (text: string) => text.split(SECRET).join("[redacted]");

describe("trace excerpts", () => {
  it("cuts to the bound with a marker saying so", () => {
    const cut = excerpt("a".repeat(5_000), redact, 1_024);
    expect(cut.startsWith("a".repeat(1_024))).toBe(true);
    expect(cut).toContain("[… truncated: showed 1024 of");
  });

  it("redacts before cutting, so a secret that straddles the bound leaves no prefix of itself", () => {
    const text = `${"a".repeat(1_020)}${SECRET}${"b".repeat(3_000)}`;
    const cut = excerpt(text, redact, 1_024);
    expect(cut).not.toContain(SECRET.slice(0, 4));
    expect(cut.startsWith(`${"a".repeat(1_020)}[red`)).toBe(true);
  });

  it("keeps enough raw text past the bound for a secret starting inside it", () => {
    const text = `${"a".repeat(1_000)}${SECRET}${"b".repeat(10_000)}`;
    expect(rawPreview(text, 1_024)).toContain(SECRET);
    expect(rawPreview(text, 1_024).length).toBeLessThan(text.length);
  });

  it("serialises arguments as JSON, redacted", () => {
    expect(jsonExcerpt({ token: SECRET, n: 1 }, redact, 2_048)).toBe('{"token":"[redacted]","n":1}');
  });
});
