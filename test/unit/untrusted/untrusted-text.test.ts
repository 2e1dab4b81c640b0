import { describe, expect, it } from "vitest";
import { stripControlCharacters } from "../../../src/untrusted/control-characters";
import { jsonDepthOverLimit } from "../../../src/untrusted/json-depth";

describe("stripControlCharacters", () => {
  it.each([
    ["SGR colours", "\x1b[1;31mred\x1b[0m", "red"],
    ["cursor movement and erase", "a\x1b[2Jb\x1b[10;20Hc\x1b[?25l", "abc"],
    ["OSC 8 hyperlink, BEL and ST terminated", "\x1b]8;;https://evil.example\x07x\x1b]8;;\x1b\\", "x"],
    ["OSC 52 clipboard write", "\x1b]52;c;ZXZpbA==\x07ok", "ok"],
    ["an unterminated OSC up to the next escape", "\x1b]0;title\x1b[0mok", "ok"],
    ["DCS", "\x1bPq#0;2;0;0;0\x1b\\ok", "ok"],
    ["C1 CSI and C1 OSC", "\x9b31mred\x9d8;;u\x9cok", "redok"],
    ["C0, DEL and C1 singles, CR included", "a\x00b\x07c\x08d\re\x7ff\x85g", "abcdefg"],
    ["tabs and line feeds kept", "a\tb\nc\r\nd", "a\tb\nc\nd"],
    ["text with no control characters unchanged, Unicode included", "Grüße, 日本 — ok", "Grüße, 日本 — ok"],
  ])("%s", (_name, input, output) => {
    expect(stripControlCharacters(input)).toBe(output);
  });
});

describe("jsonDepthOverLimit", () => {
  const nested = (depth: number) => "[".repeat(depth) + "]".repeat(depth);
  it("counts arrays and objects from the outermost value", () => {
    expect(jsonDepthOverLimit(nested(64))).toBeNull();
    expect(jsonDepthOverLimit(nested(65))).toBe(65);
    expect(jsonDepthOverLimit(`{"a":{"b":[${nested(62)}]}}`)).toBe(65);
  });
  it("ignores brackets in strings, escaped quotes included", () => {
    expect(jsonDepthOverLimit(`["${"[{".repeat(100)}\\"${"[".repeat(100)}"]`)).toBeNull();
  });
  it("reads UTF-8 bytes the same as text", () => {
    const text = `{"é":"ü[[[","x":${nested(70)}}`;
    expect(jsonDepthOverLimit(new TextEncoder().encode(text))).toBe(jsonDepthOverLimit(text));
    expect(jsonDepthOverLimit(text)).toBe(65);
  });
  it("scans 10,000 levels and a 4 MB flat document without recursion", () => {
    expect(jsonDepthOverLimit(nested(10_000))).toBe(65);
    expect(jsonDepthOverLimit(JSON.stringify({ a: "x".repeat(4_000_000), b: [1, 2, 3] }))).toBeNull();
  });
});
