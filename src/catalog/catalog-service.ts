import type { SkillConfig } from "./catalog-schema";
import type { CatalogProblem } from "./catalog-problems";
import { deleteSkill, getSkill, listSkills, restoreVersion, saveSkill, saveSkills, type ChangeMeta } from "./catalog-store";
import { forgetSkill, publishSkill, type CatalogBindings } from "./compiled-skill-cache";
import { parseCatalog } from "./parse-catalog";
import { announceSkillChanged } from "./skill-change-events";

/**
 * Catalog changes for the admin API and the demo loader: D1 first (the source of truth), then
 * the changed skill's KV entry, then an announcement of each changed skill (the MCP surface
 * turns it into `notifications/tools/list_changed`). Every write announces here, so no caller
 * can forget to.
 */

export interface SkillChange {
  skill: string;
  version: number;
  /** False when the submitted config equals the live one, so no version was added. */
  changed: boolean;
}
export type ReplaceCatalogResult = { ok: true; versions: SkillChange[]; removed: string[] } | { ok: false; problems: CatalogProblem[] };

/** Saves a validated config as a new version (unless identical to the live one) and publishes it. */
export async function saveSkillConfig(env: CatalogBindings, skill: string, config: SkillConfig, meta: ChangeMeta): Promise<SkillChange> {
  const live = await getSkill(env.DB, skill);
  if (live && sameConfig(live.config, config)) {
    await publishSkill(env, live);
    return { skill, version: live.version, changed: false };
  }
  const version = await saveSkill(env.DB, skill, config, meta);
  await republish(env, skill);
  announceSkillChanged(skill);
  return { skill, version, changed: true };
}

export async function restoreSkillVersion(env: CatalogBindings, skill: string, version: number, author: string, note?: string): Promise<number> {
  const restored = await restoreVersion(env.DB, skill, version, author, note);
  await republish(env, skill);
  announceSkillChanged(skill);
  return restored;
}

export async function removeSkill(env: CatalogBindings, skill: string): Promise<boolean> {
  const existed = await deleteSkill(env.DB, skill);
  await forgetSkill(env, skill);
  if (existed) announceSkillChanged(skill);
  return existed;
}

/**
 * Validates a whole catalog (or seed config) and makes it the tenant's catalog in one D1
 * transaction: every changed skill gets a new version, skills not in it stop being served (their
 * history stays and can be restored), unless `prune` is false (then they are kept as they are).
 * Nothing is written when any problem is found.
 */
export async function replaceCatalog(env: CatalogBindings, input: unknown, author: string, note?: string, prune = true): Promise<ReplaceCatalogResult> {
  const parsed = parseCatalog(input);
  if (!parsed.ok) return parsed;
  const meta: ChangeMeta = note === undefined ? { author } : { author, note };
  const skills = Object.entries(parsed.catalog.skills);
  const live = await Promise.all(skills.map(([skill]) => getSkill(env.DB, skill)));
  const toSave = skills.filter(([, config], index) => !sameConfig(live[index]?.config, config)).map(([skill, config]) => ({ skill, config }));
  const removed = prune ? (await listSkills(env.DB)).map(({ name }) => name).filter((name) => !(name in parsed.catalog.skills)) : [];

  const savedVersions = await saveSkills(env.DB, toSave, meta, removed);
  const saved = new Map(toSave.map(({ skill }, index) => [skill, savedVersions[index]]));
  const versions: SkillChange[] = [];
  for (const [index, [skill]] of skills.entries()) {
    const version = saved.get(skill);
    const unchanged = live[index];
    if (version !== undefined) await republish(env, skill);
    else if (unchanged) await publishSkill(env, unchanged);
    versions.push({ skill, version: version ?? unchanged?.version ?? 0, changed: version !== undefined });
  }
  for (const skill of removed) await forgetSkill(env, skill);
  for (const change of versions) if (change.changed) announceSkillChanged(change.skill);
  for (const skill of removed) announceSkillChanged(skill);
  return { ok: true, versions, removed };
}

function sameConfig(a: SkillConfig | undefined, b: SkillConfig): boolean {
  return a !== undefined && JSON.stringify(a) === JSON.stringify(b);
}

/** Publishes what D1 now says is live (not what this call wrote), in case a concurrent save won. */
async function republish(env: CatalogBindings, skill: string): Promise<void> {
  const live = await getSkill(env.DB, skill);
  if (live) await publishSkill(env, live);
  else await forgetSkill(env, skill);
}
