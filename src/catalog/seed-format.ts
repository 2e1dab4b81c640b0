import { DEFAULT_SKILL } from "./catalog-schema";
import { jsonPath, type CatalogProblem } from "./catalog-problems";
import { isRawObject, type RawObject } from "./checks/raw-json";

/**
 * The original Slipsnisse config: `{"mcps": {id: server}, "tools": [expert]}`. It becomes a
 * catalog with one skill, `default`. Problems are found on the converted document and their
 * paths mapped back, so `$.skills.default.experts[2].name` is reported as `$.tools[2].name`.
 */
export interface SeedConversion {
  catalog: RawObject;
  /** Problems only the seed shape can have (unknown top-level keys). */
  problems: CatalogProblem[];
  toOriginalPath(catalogPath: string): string;
  /** Rewrites fix texts that name catalog keys into the seed's key names. */
  toOriginalWording(text: string): string;
}

const SEED_KEYS = ["$schema", "mcps", "tools", "description", "tool_policy"] as const;

export function isSeedDocument(input: unknown): input is RawObject {
  return isRawObject(input) && !("skills" in input) && ("mcps" in input || "tools" in input);
}

export function convertSeed(seed: RawObject): SeedConversion {
  const skill: RawObject = {};
  if (seed.description !== undefined) skill.description = seed.description;
  if (seed.tool_policy !== undefined) skill.tool_policy = seed.tool_policy;
  if (seed.mcps !== undefined) skill.servers = seed.mcps;
  if (seed.tools !== undefined) skill.experts = seed.tools;
  const problems = Object.keys(seed)
    .filter((key) => !(SEED_KEYS as readonly string[]).includes(key))
    .map((key) => ({
      path: jsonPath([key]),
      message: `unknown key \`${key}\` in a seed config`,
      fix: `remove it; a seed config holds ${SEED_KEYS.join(", ")} (or use the catalog format with \`skills\`)`,
    }));
  return { catalog: { skills: { [DEFAULT_SKILL]: skill } }, problems, toOriginalPath, toOriginalWording };
}

const SKILL_PATH = jsonPath(["skills", DEFAULT_SKILL]);
const PREFIXES: [string, string][] = [
  [`${SKILL_PATH}.servers`, "$.mcps"],
  [`${SKILL_PATH}.experts`, "$.tools"],
  [SKILL_PATH, "$"],
  ["$.skills", "$"],
];

function toOriginalPath(catalogPath: string): string {
  for (const [from, to] of PREFIXES) {
    const rest = catalogPath.slice(from.length);
    if (catalogPath.startsWith(from) && (rest === "" || rest.startsWith(".") || rest.startsWith("["))) return to + rest;
  }
  return catalogPath;
}

function toOriginalWording(text: string): string {
  return text.replaceAll("the skill's servers", "`mcps`").replaceAll("this skill defines", "`mcps` defines");
}
