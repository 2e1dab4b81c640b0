import type { SkillConfig } from "../catalog/catalog-schema";
import { saveSkillConfig, type SkillChange } from "../catalog/catalog-service";
import { getSkill, type StoredSkill } from "../catalog/catalog-store";
import { changeMeta, type AdminContext } from "./admin-context";
import { SkillNotFoundError, VersionMismatchError } from "./admin-errors";

/** The live skill from D1 (the source of truth, never the KV copy, which may lag). */
export async function liveSkill(c: AdminContext, skill: string): Promise<StoredSkill> {
  const live = await getSkill(c.env.DB, skill);
  if (!live) throw new SkillNotFoundError(skill);
  return live;
}

/**
 * Saves a validated config as the skill's next version, authored by the signed-in admin.
 * `If-Match: <version>` makes the save conditional, so two admins editing the same skill do not
 * silently overwrite each other (the later one gets 412 and re-reads).
 */
export async function saveSkill(c: AdminContext, skill: string, config: SkillConfig, live: StoredSkill | null): Promise<SkillChange> {
  assertIfMatch(c, skill, live?.version ?? null);
  return saveSkillConfig(c.env, skill, config, changeMeta(c));
}

/** `If-Match: <version>` (0 for a skill that does not exist yet) must name the live version. */
export function assertIfMatch(c: AdminContext, skill: string, liveVersion: number | null): void {
  const expected = c.req.header("if-match")?.replaceAll('"', "").trim();
  if (expected !== undefined && expected !== String(liveVersion ?? 0)) throw new VersionMismatchError(skill, expected, liveVersion);
}
