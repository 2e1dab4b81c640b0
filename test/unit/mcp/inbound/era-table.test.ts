import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { CLIENT_ERAS, eraTableMarkdown, fullyDeclaredProfile } from "../../../../src/mcp/inbound/era-table";

const doc = fileURLToPath(new URL("../../../../docs/clients.md", import.meta.url));
const BLOCK = /(<!-- era-table: written from src\/mcp\/inbound\/era-table\.ts[^\n]*-->\n)([\s\S]*?)(\n<!-- \/era-table -->)/;

describe("the era table of docs/clients.md is the ClientProfile's", () => {
  it("the doc's table is the one era-table.ts writes (WRITE_ERA_TABLE=1 rewrites it)", () => {
    const text = readFileSync(doc, "utf8");
    const match = BLOCK.exec(text);
    expect(match, "docs/clients.md has the era-table markers").not.toBeNull();
    const expected = eraTableMarkdown();
    if (process.env.WRITE_ERA_TABLE === "1" && match?.[2] !== expected) {
      writeFileSync(
        doc,
        text.replace(BLOCK, (_all, open: string, _table: string, close: string) => `${open}${expected}${close}`),
      );
      return;
    }
    expect(match?.[2], "run WRITE_ERA_TABLE=1 npx vitest run --project unit test/unit/mcp/inbound/era-table.test.ts").toBe(expected);
  });

  it("every era is a row, and rows differ where their profiles do", () => {
    const table = eraTableMarkdown().split("\n").slice(2);
    expect(table).toHaveLength(CLIENT_ERAS.length);
    const profiles = CLIENT_ERAS.map(fullyDeclaredProfile);
    expect(profiles.map((p) => [p.era, p.userChannel, p.midCall, p.tasks, p.resumableCalls])).toEqual([
      ["2026-07-28", "input-required", "none", "extension", false],
      ["2025", "elicit", "call-stream", "core", true],
      ["2025", "elicit", "call-stream", "core", false],
      ["2025", "pause", "none", "core", false],
      ["2025", "elicit", "sdk", "core", false],
    ]);
  });
});
