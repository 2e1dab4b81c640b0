import { readFileSync } from "node:fs";
import { relative } from "node:path";
import { describe, expect, it } from "vitest";
import { sourceFiles, src } from "./source-imports";

/**
 * A file a reader takes in at one sitting. The generated files (src/catalog/catalog.schema.json,
 * and worker-configuration.d.ts at the repository's root) are not source files here: only
 * .ts, .mts, .mjs and .js are counted.
 */
const MAX_LINES = 400;

function lineCount(text: string): number {
  if (text === "") return 0;
  return text.endsWith("\n") ? text.split("\n").length - 1 : text.split("\n").length;
}

describe("file size", () => {
  it("counts lines as wc -l does, a last line without a newline included", () => {
    expect([lineCount(""), lineCount("a\n"), lineCount("a\nb"), lineCount("a\nb\n")]).toEqual([0, 1, 2, 2]);
  });

  it(`no source file under src/ is over ${MAX_LINES} lines`, () => {
    const over = sourceFiles(src)
      .map((file) => ({ file: relative(src, file), lines: lineCount(readFileSync(file, "utf8")) }))
      .filter(({ lines }) => lines > MAX_LINES)
      .map(({ file, lines }) => `src/${file}: ${lines} lines`);
    expect(over, `split each into modules of one concept each (at most ${MAX_LINES} lines)`).toEqual([]);
  });
});
