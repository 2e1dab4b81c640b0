import { z } from "zod";
import { catalogSchema } from "./catalog-schema";

/**
 * The JSON Schema editors use for catalog files (`"$schema": "./src/catalog/catalog.schema.json"`),
 * generated from the zod schema so the two cannot disagree. `io: "input"` because people write
 * the input shape: fields with defaults are optional there. The committed copy is kept current by
 * test/unit/catalog/catalog-json-schema.test.ts (UPDATE_CATALOG_SCHEMA=1 rewrites it).
 */
export function catalogJsonSchema(): Record<string, unknown> {
  return {
    ...z.toJSONSchema(catalogSchema, { io: "input" }),
    title: "Slipsnisse catalog",
    description: "Skills (each an MCP endpoint) with their downstream MCP servers, tool policy and expert tools.",
  };
}
