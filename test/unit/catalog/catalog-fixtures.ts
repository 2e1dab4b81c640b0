import { expect } from "vitest";
import type { CatalogProblem } from "../../../src/catalog/catalog-problems";
import { parseCatalog } from "../../../src/catalog/parse-catalog";

/** A catalog that passes every check; tests break one thing at a time. */
export function validCatalog(): { skills: Record<string, Record<string, unknown>> } {
  return {
    skills: {
      default: {
        servers: {
          docs: { url: "https://docs.example.com/mcp", headers: { Authorization: "Bearer ${DOCS_TOKEN}" } },
          fs: { url: "https://fs.example.com/mcp" },
        },
        experts: [
          {
            name: "research_dependency",
            description: "Finds libraries for a problem.",
            arguments: { type: "object", properties: { query: { type: "string" } }, required: ["query"] },
            internal_tools: { docs: ["search"], fs: ["read_file"] },
            provider: "workers-ai",
          },
        ],
      },
    },
  };
}

export function defaultSkill(catalog: ReturnType<typeof validCatalog>): Record<string, unknown> {
  const skill = catalog.skills.default;
  if (!skill) throw new Error("fixture has no default skill");
  return skill;
}

export function firstExpert(catalog: ReturnType<typeof validCatalog>): Record<string, unknown> {
  const experts = defaultSkill(catalog).experts;
  if (!Array.isArray(experts) || typeof experts[0] !== "object" || experts[0] === null) throw new Error("fixture has no expert");
  return experts[0] as Record<string, unknown>;
}

export function problemsOf(input: unknown): CatalogProblem[] {
  const result = parseCatalog(input);
  if (result.ok) throw new Error("expected the catalog to be refused, but it was accepted");
  return result.problems;
}

/** The single problem reported at `path` (fails listing every path when there is none or several). */
export function problemAt(problems: readonly CatalogProblem[], path: string): CatalogProblem {
  const matches = problems.filter((problem) => problem.path === path);
  expect(matches, `problems at ${path} among ${JSON.stringify(problems.map((p) => p.path))}`).toHaveLength(1);
  const [match] = matches;
  if (!match) throw new Error("unreachable");
  return match;
}
