import type { SkillConfig } from "../../src/catalog/catalog-schema";
import { skillSchema } from "../../src/catalog/catalog-schema";

/** Storage is shared by the tests of a file, so every test uses its own skill names. */
export function uniqueSkill(label: string): string {
  return `${label}-${crypto.randomUUID().slice(0, 8)}`;
}

export function skillConfig(description: string): SkillConfig {
  return skillSchema.parse({
    description,
    servers: { docs: { url: "https://docs.example.com/mcp", headers: { Authorization: "Bearer ${API_KEY}" } } },
    experts: [{ name: "ask_docs", description: "Answers from the docs.", internal_tools: { docs: ["search"] } }],
  });
}
