/**
 * A problem found in a catalog document: where (a JSON path into the document the user wrote),
 * what is wrong, and what to write instead. Messages never echo header or env values, because
 * those are where credentials end up.
 */
export interface CatalogProblem {
  /** JSON path such as `$.skills.default.servers.fs.url` or `$.tools[2].name`. */
  path: string;
  message: string;
  fix: string;
}

export type PathSegment = string | number;

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$-]*$/;

/** `["skills", "default", "experts", 0, "name"]` → `$.skills.default.experts[0].name`. */
export function jsonPath(segments: readonly PathSegment[]): string {
  let path = "$";
  for (const segment of segments) {
    if (typeof segment === "number") path += `[${segment}]`;
    else if (IDENTIFIER.test(segment)) path += `.${segment}`;
    else path += `[${JSON.stringify(segment)}]`;
  }
  return path;
}

/** One line per problem, for CLI and plain-text HTTP answers. */
export function formatProblems(problems: readonly CatalogProblem[]): string {
  return problems.map((problem) => `${problem.path} — ${problem.message}. Fix: ${problem.fix}`).join("\n");
}
