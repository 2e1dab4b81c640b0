import { SlipsnisseError } from "../errors";
import type { CatalogProblem } from "./catalog-problems";
import { formatProblems } from "./catalog-problems";

/** A catalog (or one skill of it) did not pass parseCatalog; `problems` lists every finding. */
export class InvalidCatalogError extends SlipsnisseError {
  readonly kind = "invalid-catalog";
  readonly fix = "Correct each listed path as its fix says, then submit the catalog again.";
  constructor(readonly problems: readonly CatalogProblem[]) {
    super(`The catalog has ${problems.length} problem(s):\n${formatProblems(problems)}`);
  }
}

export class SkillVersionNotFoundError extends SlipsnisseError {
  readonly kind = "skill-version-not-found";
  readonly fix: string;
  constructor(
    readonly skill: string,
    readonly version: number,
  ) {
    super(`Skill "${skill}" has no version ${version}.`);
    this.fix = `List the versions of "${skill}" and pick one that exists.`;
  }
}

/** A stored row no longer passes the schema (edited by hand, or written by an incompatible build). */
export class StoredSkillInvalidError extends SlipsnisseError {
  readonly kind = "stored-skill-invalid";
  readonly fix: string;
  constructor(
    readonly skill: string,
    readonly version: number,
    readonly where: "D1" | "KV",
    readonly detail: string,
  ) {
    super(`The stored configuration of skill "${skill}" version ${version} in ${where} is not valid: ${detail}`);
    this.fix = `Restore an earlier version of "${skill}" or save its configuration again through the admin API.`;
  }
}
