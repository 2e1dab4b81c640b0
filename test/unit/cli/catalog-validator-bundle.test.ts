import { readFileSync, writeFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { formatProblems as bundledFormat, parseCatalog as bundledParse } from "../../../bin/catalog-validator.mjs";
import { bundlePath, buildCatalogValidator } from "../../../src/cli/build-catalog-validator.mjs";
import { formatProblems } from "../../../src/catalog/catalog-problems";
import { parseCatalog } from "../../../src/catalog/parse-catalog";

describe("bin/catalog-validator.mjs (the CLI's offline validator, built by `npm ci`)", () => {
  it("is the current build of src/catalog (`npm run prepare` or UPDATE_CATALOG_VALIDATOR=1 rewrites it)", async () => {
    const fresh = await buildCatalogValidator();
    if (process.env.UPDATE_CATALOG_VALIDATOR === "1") writeFileSync(bundlePath, fresh);
    const built = readFileSync(bundlePath, "utf8");
    expect(built === fresh, "bin/catalog-validator.mjs is stale: run `npm run prepare`").toBe(true);
  }, 30_000);

  const documents: Record<string, unknown> = {
    valid: {
      skills: {
        default: {
          servers: { docs: { url: "https://docs.example.com/mcp" } },
          experts: [{ name: "ask", description: "d", internal_tools: { docs: ["search"] } }],
        },
      },
    },
    "bad names and types": { skills: { Bad: { experts: [{ name: "a b", budget: { max_steps: "x" }, extra: 1 }], servers: { a: { url: 5 } } } } },
    "stdio server and literal credential": {
      skills: {
        s: { servers: { fs: { command: "npx", args: [] }, web: { url: "https://w.example.com", headers: { Authorization: "Bearer abcdef0123456789" } } } },
      },
    },
    "seed format": { mcps: { x: { url: "ftp://nope" } }, tools: [{ name: "t", description: "d", provider: "openai-compatible" }], extra: true },
    "unsafe endpoints": {
      skills: {
        s: {
          servers: { a: { url: "https://u:p@a.example.com/mcp" }, b: { url: "https://10.0.0.1/mcp" } },
          experts: [{ name: "m", description: "d", provider: "openai-compatible", base_url: "javascript:alert(1)" }],
        },
      },
    },
    "not an object": [1, 2],
  };
  for (const [label, document] of Object.entries(documents)) {
    it(`says exactly what the API says: ${label}`, () => {
      const bundled = bundledParse(document);
      const source = parseCatalog(document);
      expect(bundled).toEqual(source);
      if (!source.ok && !bundled.ok) expect(bundledFormat(bundled.problems)).toBe(formatProblems(source.problems));
    });
  }
});
