import { readdirSync, readFileSync, statSync } from "node:fs";
import { basename, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const repo = fileURLToPath(new URL("../../../", import.meta.url));
const src = join(repo, "src");

function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return tsFiles(path);
    return name.endsWith(".ts") ? [path] : [];
  });
}

const files = tsFiles(src).map((path) => ({ path: relative(repo, path), text: readFileSync(path, "utf8") }));
const kinds = files.flatMap(({ path, text }) => [...text.matchAll(/\breadonly kind = "([^"]*)"/g)].map((m) => ({ path, kind: m[1] ?? "" })));

/** The convention written in src/errors.ts. */
describe("error kinds", () => {
  it("finds the error classes it checks", () => {
    expect(kinds.length).toBeGreaterThan(40);
  });

  it("are kebab-case", () => {
    expect(kinds.filter(({ kind }) => !/^[a-z0-9]+(-[a-z0-9]+)*$/.test(kind))).toEqual([]);
  });

  it("are unique across src/", () => {
    const seen = new Map<string, string>();
    const duplicates = kinds.filter(({ path, kind }) => {
      const first = seen.get(kind);
      seen.set(kind, first ?? path);
      return first !== undefined;
    });
    expect(duplicates).toEqual([]);
  });

  it("are defined in the errors module of their area (a *-errors.ts file)", () => {
    expect(kinds.filter(({ path }) => !basename(path).endsWith("-errors.ts")).map(({ path, kind }) => `${path}: ${kind}`)).toEqual([]);
  });
});
