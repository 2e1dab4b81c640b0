import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { COMMANDS } from "../../../src/cli/main.mjs";
import { findMentions } from "../../user-facing-references";

const root = fileURLToPath(new URL("../../../", import.meta.url));
const packageScripts = Object.keys((JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { scripts: Record<string, string> }).scripts);

function sourceFiles(dir: string): Record<string, string> {
  const files: Record<string, string> = {};
  for (const entry of readdirSync(join(root, dir), { withFileTypes: true, recursive: true })) {
    if (!entry.isFile() || !/\.(ts|mjs|md)$/.test(entry.name)) continue;
    const path = join(entry.parentPath, entry.name);
    files[relative(root, path)] = readFileSync(path, "utf8");
  }
  return files;
}

const pages = Object.fromEntries(["README.md", "test/bench/README.md"].map((path) => [path, readFileSync(join(root, path), "utf8")]));

describe("CLI commands and npm scripts named in messages and docs", () => {
  const { cliCommands, npmScripts } = findMentions({
    ...sourceFiles("src"),
    ...sourceFiles("scripts"),
    ...sourceFiles("bin"),
    ...sourceFiles("docs"),
    ...pages,
  });

  it("finds the commands and scripts the messages name (the scan works)", () => {
    expect(cliCommands.map((m) => m.command)).toEqual(expect.arrayContaining(["push", "pull", "validate", "tenant"]));
    expect(npmScripts.map((m) => m.script)).toEqual(expect.arrayContaining(["start", "start:remote"]));
  });

  it("every `npx slipsnisse <command>` is in the CLI's command table", () => {
    expect(cliCommands.filter(({ command }) => !(command in COMMANDS))).toEqual([]);
  });

  it("every `npm run <script>`, `npm start` and `npm test` is a script in package.json", () => {
    expect(npmScripts.filter(({ script }) => !packageScripts.includes(script))).toEqual([]);
  });
});
