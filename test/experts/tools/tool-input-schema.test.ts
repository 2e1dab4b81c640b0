import type { Schema } from "ai";
import { describe, expect, it } from "vitest";
import { toolInputSchema } from "../../../src/experts/tools/tool-input-schema";

async function check(schema: Schema<unknown>, value: unknown): Promise<{ success: boolean; error?: string }> {
  const result = await schema.validate?.(value);
  if (!result) throw new Error("the schema has no validator");
  return result.success ? { success: true } : { success: false, error: result.error.message };
}

describe("toolInputSchema", () => {
  const listed = { type: "object" as const, properties: { q: { type: "string" } }, required: ["q"] };

  it("adapts one listing's schema once, and the shared schema still checks every call's arguments", async () => {
    const schema = toolInputSchema(listed);
    expect(toolInputSchema(listed)).toBe(schema);
    for (let i = 0; i < 2; i += 1) {
      expect(await check(schema, { q: "x" })).toEqual({ success: true });
      const refused = await check(schema, { q: 7 });
      expect(refused.success).toBe(false);
      expect(refused.error).toMatch(/input schema.*#\/q/);
    }
  });

  it("adapts a new listing's schema anew, even when it reads the same", async () => {
    const relisted = structuredClone(listed);
    relisted.properties.q.type = "number";
    expect(toolInputSchema(relisted)).not.toBe(toolInputSchema(listed));
    expect((await check(toolInputSchema(relisted), { q: 7 })).success).toBe(true);
  });
});
