import { describe, expect, it } from "vitest";
import { parseCatalog } from "../../../src/catalog/parse-catalog";
import { validCatalog } from "./catalog-fixtures";

describe("parseCatalog accepts a valid catalog", () => {
  it("returns the catalog with defaults filled in", () => {
    const result = parseCatalog(validCatalog());
    if (!result.ok) throw new Error(JSON.stringify(result.problems));
    const skill = result.catalog.skills.default;
    expect(skill?.servers.docs?.transport).toBe("auto");
    expect(skill?.experts[0]?.budget.max_steps).toBe(8);
    expect(skill?.tool_policy).toEqual({ allowed: ["*"], blocked: [], requires_approval: [], approve_destructive: true });
  });

  it("keeps a secret reference in a header as written, unresolved", () => {
    const result = parseCatalog(validCatalog());
    expect(result.ok && result.catalog.skills.default?.servers.docs?.headers.Authorization).toBe("Bearer ${DOCS_TOKEN}");
  });

  it("accepts openai-compatible with base_url and a service-binding server", () => {
    const catalog = validCatalog();
    const skill = catalog.skills.default;
    if (!skill) throw new Error("fixture");
    skill.servers = { self: { binding: "SELF", url: "https://self.internal/demo/mcp" } };
    skill.experts = [
      {
        name: "a",
        description: "d",
        internal_tools: { self: ["echo"] },
        provider: "openai-compatible",
        base_url: "http://127.0.0.1:11434/v1",
        model: "llama3",
      },
    ];
    expect(parseCatalog(catalog)).toMatchObject({ ok: true });
  });
});

describe("the catalogs the project ships", () => {
  it("the demo catalog loaded by npm start passes every check", async () => {
    const { readFileSync } = await import("node:fs");
    const demo: unknown = JSON.parse(readFileSync(new URL("../../../src/demo/demo-catalog.json", import.meta.url), "utf8"));
    const result = parseCatalog(demo);
    expect(result.ok ? [] : result.problems).toEqual([]);
  });
});
