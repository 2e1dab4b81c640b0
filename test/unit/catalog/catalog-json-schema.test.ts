import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { catalogJsonSchema } from "../../../src/catalog/catalog-json-schema";

const committedPath = fileURLToPath(new URL("../../../src/catalog/catalog.schema.json", import.meta.url));

describe("catalog.schema.json", () => {
  const generated = `${JSON.stringify(catalogJsonSchema(), null, 2)}\n`;

  it("matches the zod catalog schema (run with UPDATE_CATALOG_SCHEMA=1 to regenerate)", () => {
    if (process.env.UPDATE_CATALOG_SCHEMA === "1") writeFileSync(committedPath, generated);
    const committed = readFileSync(committedPath, "utf8");
    expect(committed, "src/catalog/catalog.schema.json is stale: run UPDATE_CATALOG_SCHEMA=1 npx vitest run --project unit test/unit/catalog").toBe(generated);
  });

  it("describes the input shape: defaulted fields are optional and unknown keys are refused", () => {
    const schema = catalogJsonSchema();
    expect(schema.required).toEqual(["skills"]);
    expect(schema.additionalProperties).toBe(false);
    const text = JSON.stringify(schema);
    expect(text).toContain("system_prompt");
    expect(text).toContain("max_tool_result_bytes");
  });
});
