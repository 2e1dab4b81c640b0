import { catalogSchema, SKILL_NAME_PATTERN, type Catalog } from "./catalog-schema";
import type { CatalogProblem } from "./catalog-problems";
import { checkExperts } from "./checks/expert-checks";
import { FindingSink } from "./checks/finding-sink";
import { suggestSkillName } from "./checks/name-suggestions";
import { isRawObject, objectEntries } from "./checks/raw-json";
import { checkServers } from "./checks/server-checks";
import { checkToolPolicy } from "./checks/tool-policy-checks";
import { problemsFromIssue } from "./checks/zod-issue-problems";
import { convertSeed, isSeedDocument } from "./seed-format";

export type ParseCatalogResult = { ok: true; catalog: Catalog } | { ok: false; problems: CatalogProblem[] };

/**
 * Validates a catalog (or a Slipsnisse seed config) and reports every problem at once, each with
 * its JSON path in the document the user wrote and a concrete fix.
 */
export function parseCatalog(input: unknown): ParseCatalogResult {
  if (!isSeedDocument(input)) return parseCatalogDocument(input);
  const seed = convertSeed(input);
  const result = parseCatalogDocument(seed.catalog);
  const problems = result.ok ? [] : result.problems;
  const mapped = problems.map((problem) => ({
    path: seed.toOriginalPath(problem.path),
    message: seed.toOriginalWording(problem.message),
    fix: seed.toOriginalWording(problem.fix),
  }));
  const all = inDocumentOrder([...seed.problems, ...mapped]);
  return all.length === 0 && result.ok ? result : { ok: false, problems: all };
}

function parseCatalogDocument(input: unknown): ParseCatalogResult {
  const sink = new FindingSink();
  if (isRawObject(input)) {
    for (const [name, skill] of objectEntries(input.skills)) checkSkill(name, skill, sink);
  }
  const parsed = catalogSchema.safeParse(input);
  const covered = new Set(sink.findings.flatMap((finding) => finding.covers));
  const zodProblems = parsed.success
    ? []
    : parsed.error.issues.flatMap((issue) => problemsFromIssue(issue, catalogSchema, input)).filter((problem) => !covered.has(problem.path));
  const problems = [...sink.findings.map(({ path, message, fix }) => ({ path, message, fix })), ...zodProblems];
  if (problems.length > 0 || !parsed.success) return { ok: false, problems: inDocumentOrder(problems) };
  return { ok: true, catalog: parsed.data };
}

function checkSkill(name: string, skill: unknown, sink: FindingSink): void {
  if (!SKILL_NAME_PATTERN.test(name)) {
    sink.add(
      ["skills", name],
      `skill name \`${name}\` is not allowed: it becomes the URL path /s/<skill>/mcp, so use 1-63 of lowercase a-z, 0-9 and \`-\`, starting with a letter or digit`,
      `rename it to \`${suggestSkillName(name)}\``,
    );
  }
  if (!isRawObject(skill)) return;
  checkServers(skill.servers, ["skills", name, "servers"], sink);
  const serverIds = isRawObject(skill.servers) ? Object.keys(skill.servers) : [];
  checkExperts(skill.experts, serverIds, ["skills", name, "experts"], sink);
  checkToolPolicy(skill.tool_policy, serverIds, ["skills", name, "tool_policy"], sink);
}

/** Stable sort by path, so problems of one server or expert are listed together. */
export function inDocumentOrder(problems: CatalogProblem[]): CatalogProblem[] {
  const byPath = (a: CatalogProblem, b: CatalogProblem) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0);
  return [...problems].sort(byPath); // Array.prototype.sort is stable (ES2019)
}
