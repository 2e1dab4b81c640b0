import { jsonPath, type CatalogProblem, type PathSegment } from "../catalog/catalog-problems";
import type { SkillConfig } from "../catalog/catalog-schema";
import { parseCatalog } from "../catalog/parse-catalog";
import { InvalidBodyError } from "./admin-errors";

/**
 * Validates one skill's configuration with the same checks as a whole catalog (parseCatalog), so
 * the API, the CLI and `PUT /catalog` say the same thing. `bodyAt` is where the request body sits
 * inside the skill (`[]` for a whole skill, `["servers", id]` for one server): problems inside
 * the body are reported at paths into the body (`$.url`); problems the change causes elsewhere
 * in the skill keep their catalog path (`$.skills.<skill>.experts[0]...`), which is what `pull`
 * shows. Throws InvalidBodyError listing every problem.
 */
export function validateSkillDocument(skill: string, document: unknown, bodyAt: readonly PathSegment[]): SkillConfig {
  const result = parseCatalog({ skills: { [skill]: document } });
  if (!result.ok) throw new InvalidBodyError(relativeTo(jsonPath(["skills", skill, ...bodyAt]), result.problems));
  const config = result.catalog.skills[skill];
  if (!config) throw new Error(`parseCatalog dropped skill "${skill}"`);
  return config;
}

export function relativeTo(prefix: string, problems: readonly CatalogProblem[]): CatalogProblem[] {
  return problems.map((problem) => {
    const rest = problem.path.slice(prefix.length);
    const inside = problem.path.startsWith(prefix) && (rest === "" || rest.startsWith(".") || rest.startsWith("["));
    return inside ? { ...problem, path: `$${rest}` } : problem;
  });
}
