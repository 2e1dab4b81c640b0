import { z } from "zod";
import type { SkillConfig } from "../catalog/catalog-schema";
import { replaceCatalog, restoreSkillVersion, saveSkillConfig, type ReplaceCatalogResult, type SkillChange } from "../catalog/catalog-service";
import { getSkill, getVersion, type ChangeMeta, type StoredSkill } from "../catalog/catalog-store";
import { parseCatalog } from "../catalog/parse-catalog";
import { SkillVersionNotFoundError } from "../catalog/catalog-errors";
import { log } from "../observability/logger";
import { changeMeta, type AdminContext } from "./admin-context";
import { InvalidBodyError, InvalidParameterError, SkillNotFoundError, VersionMismatchError } from "./admin-errors";
import { assertDeploymentRuns } from "./deployment-checks";
import { gatedExperts, runGate } from "./evals/eval-gate";

/**
 * Every admin API write that changes what an expert does goes through this file (the whole
 * skill, one expert, one server, a restore, the whole catalog), and each through `gateWrite`:
 * there is no way to save a skill past the eval gate except the logged, recorded override.
 */

/** The live skill from D1 (the source of truth, never the KV copy, which may lag). */
export async function liveSkill(c: AdminContext, skill: string): Promise<StoredSkill> {
  const live = await getSkill(c.env.DB, skill);
  if (!live) throw new SkillNotFoundError(skill);
  return live;
}

/**
 * Saves a validated config as the skill's next version, authored by the signed-in admin, once
 * the eval gate lets it. `If-Match: <version>` makes the save conditional, so two admins editing
 * the same skill do not silently overwrite each other (the later one gets 412 and re-reads).
 * `renamedFrom` maps an expert's new name to its stored one (the per-expert PUT renames).
 */
export async function saveSkill(
  c: AdminContext,
  skill: string,
  config: SkillConfig,
  live: StoredSkill | null,
  renamedFrom?: ReadonlyMap<string, string>,
): Promise<SkillChange> {
  assertIfMatch(c, skill, live?.version ?? null);
  assertDeploymentRuns(c.env, { [skill]: config });
  const meta = changeMeta(c);
  const overridden = await gateWrite(c, skill, config, live, renamedFrom);
  return saveSkillConfig(c.env, skill, config, withNote(meta, overridden));
}

/** Restores a stored version as the next one, gated as if its content were pushed. */
export async function restoreSkill(c: AdminContext, skill: string, version: number): Promise<number> {
  const live = await getSkill(c.env.DB, skill);
  if (c.req.header("if-match") !== undefined) assertIfMatch(c, skill, live?.version ?? null);
  const stored = await getVersion(c.env.DB, skill, version);
  if (!stored) throw new SkillVersionNotFoundError(skill, version);
  assertDeploymentRuns(c.env, { [skill]: stored.config });
  const meta = changeMeta(c);
  const overridden = await gateWrite(c, skill, stored.config, live);
  return restoreSkillVersion(c.env, skill, version, meta.author, withNote(meta, overridden).note);
}

/**
 * The whole catalog: every skill in it gated. A skill left out stops being served (not gated: it
 * no longer does anything), unless `?prune=false` keeps it (what `push` without --prune sends).
 */
export async function replaceWholeCatalog(c: AdminContext, body: unknown): Promise<Extract<ReplaceCatalogResult, { ok: true }>> {
  const parsed = parseCatalog(body);
  if (!parsed.ok) throw new InvalidBodyError(parsed.problems);
  assertDeploymentRuns(c.env, parsed.catalog.skills);
  let meta = changeMeta(c);
  for (const [skill, config] of Object.entries(parsed.catalog.skills)) {
    meta = withNote(meta, await gateWrite(c, skill, config, await getSkill(c.env.DB, skill)));
  }
  const prune = c.req.query("prune");
  const result = await replaceCatalog(c.env, body, meta.author, meta.note, prune !== "false" && prune !== "0");
  if (!result.ok) throw new InvalidBodyError(result.problems);
  return result;
}

/** `If-Match: <version>` (0 for a skill that does not exist yet) must name the live version. */
export function assertIfMatch(c: AdminContext, skill: string, liveVersion: number | null): void {
  const expected = c.req.header("if-match")?.replaceAll('"', "").trim();
  if (expected !== undefined && expected !== String(liveVersion ?? 0)) throw new VersionMismatchError(skill, expected, liveVersion);
}

/** A write is gated on evals when the request asks (`?require_evals=1`, what `push --require-evals` sends). */
export function evalsRequested(c: AdminContext): boolean {
  const value = c.req.query("require_evals");
  return value !== undefined && value !== "0" && value !== "false";
}

const overrideSchema = z.string().trim().min(1).max(300);

/**
 * The one gate of an admin write: runs the gated experts' evals on the candidate (refusing it,
 * nothing saved, when one fails). With
 * `?override_eval_gate=<reason>` no eval runs; the override is logged and its reason, author and
 * experts go into the new version's note (the answer), so the history shows who bypassed the
 * gate and why.
 */
async function gateWrite(
  c: AdminContext,
  skill: string,
  candidate: SkillConfig,
  live: StoredSkill | null,
  renamedFrom?: ReadonlyMap<string, string>,
): Promise<string | undefined> {
  const gated = gatedExperts(candidate, live, evalsRequested(c), renamedFrom);
  const override = c.req.query("override_eval_gate");
  if (override === undefined) {
    await runGate(c.env, new URL(c.req.url).origin, skill, candidate, live, gated);
    return undefined;
  }
  const reason = overrideSchema.safeParse(override);
  if (!reason.success) {
    throw new InvalidParameterError(
      "override_eval_gate",
      "must give the reason for skipping the eval gate, 1-300 characters",
      "Write why the evals cannot gate this change, e.g. ?override_eval_gate=model%20provider%20down; it is kept in the version's note.",
    );
  }
  if (gated.length === 0) return undefined;
  const author = c.get("admin").login;
  const experts = gated.map(({ expert }) => `${skill}/${expert.name}`).join(", ");
  log("warn", "eval gate overridden", { skill, admin: author, experts, reason: reason.data });
  return `eval gate overridden by ${author} for ${experts}: ${reason.data}`;
}

/** The request's own note with the override's appended (the history keeps both). */
function withNote(meta: ChangeMeta, extra: string | undefined): ChangeMeta {
  return extra === undefined ? meta : { ...meta, note: meta.note === undefined ? extra : `${meta.note}; ${extra}` };
}
