import { describe, expect, it } from "vitest";
import { writeTable } from "../../../src/cli/io.mjs";

describe("writeTable (the CLI's listings: members, service clients)", () => {
  it("aligns each column to its widest cell, two spaces apart, with no trailing blanks", () => {
    let out = "";
    writeTable({ write: (text: string) => (out += text) }, [
      ["user id", "login", "grants"],
      ["github:1", "a", "0"],
      ["x", "a-longer-login", ""],
    ]);
    expect(out).toBe(["user id   login           grants", "github:1  a               0", "x         a-longer-login"].map((line) => `${line}\n`).join(""));
  });
});
