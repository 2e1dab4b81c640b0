import type { SkillConfig } from "./catalog-schema";
import { InvalidCatalogError, SkillVersionNotFoundError } from "./catalog-errors";
import { parseCatalog } from "./parse-catalog";
import { readStoredConfig } from "./stored-skill";

/** D1 side of the catalog (tables in migrations/0001_catalog.sql, listed in src/storage-keys.ts). */

export interface StoredSkill {
  name: string;
  version: number;
  config: SkillConfig;
}
export interface SkillSummary {
  name: string;
  version: number;
  updatedAt: number;
}
export interface SkillVersionInfo {
  version: number;
  author: string;
  note: string | null;
  createdAt: number;
  current: boolean;
}
export interface StoredSkillVersion extends StoredSkill {
  author: string;
  note: string | null;
  createdAt: number;
}
export interface ChangeMeta {
  author: string;
  note?: string;
}

export interface SkillToSave {
  skill: string;
  config: SkillConfig;
}

/** Stores `config` as the next version of `skill` and makes it current; returns the version. */
export async function saveSkill(db: D1Database, skill: string, config: SkillConfig, meta: ChangeMeta): Promise<number> {
  const [version] = await saveSkills(db, [{ skill, config }], meta);
  if (version === undefined) throw new Error(`D1 returned no version for skill "${skill}"`);
  return version;
}

/**
 * Saves several skills (and stops serving `remove`) in one D1 transaction, so a catalog
 * replacement is all or nothing. Configs pass parseCatalog again first: this is the only door
 * into D1, so nothing the checks refuse (a literal credential, say) can be stored.
 */
export async function saveSkills(db: D1Database, entries: readonly SkillToSave[], meta: ChangeMeta, remove: readonly string[] = []): Promise<number[]> {
  const checked = parseCatalog({ skills: Object.fromEntries(entries.map(({ skill, config }) => [skill, config])) });
  if (!checked.ok) throw new InvalidCatalogError(checked.problems);
  const now = Date.now();
  const statements = entries.flatMap(({ skill, config }) => saveStatements(db, skill, checked.catalog.skills[skill] ?? config, meta, now));
  const deletes = remove.map((skill) => db.prepare("DELETE FROM skills WHERE name = ?1").bind(skill));
  if (statements.length + deletes.length === 0) return [];
  const results = await db.batch<{ version: number }>([...statements, ...deletes]);
  return entries.map((_, index) => {
    const version = results[index * 2]?.results[0]?.version;
    if (typeof version !== "number") throw new Error(`D1 returned no version for skill "${entries[index]?.skill}"`);
    return version;
  });
}

function saveStatements(db: D1Database, skill: string, config: SkillConfig, meta: ChangeMeta, now: number): D1PreparedStatement[] {
  return [
    // Numbering inside the INSERT: two concurrent saves cannot pick the same version.
    db
      .prepare(
        `INSERT INTO catalog_versions (skill, version, config_json, author, note, created_at)
         SELECT ?1, COALESCE(MAX(version), 0) + 1, ?2, ?3, ?4, ?5 FROM catalog_versions WHERE skill = ?1
         RETURNING version`,
      )
      .bind(skill, JSON.stringify(config), meta.author, meta.note ?? null, now),
    db
      .prepare(
        `INSERT INTO skills (name, current_version, updated_at)
         SELECT ?1, MAX(version), ?2 FROM catalog_versions WHERE skill = ?1
         ON CONFLICT (name) DO UPDATE SET current_version = excluded.current_version, updated_at = excluded.updated_at`,
      )
      .bind(skill, now),
  ];
}

export async function getSkill(db: D1Database, skill: string): Promise<StoredSkill | null> {
  const row = await db
    .prepare(
      `SELECT s.current_version AS version, v.config_json AS json FROM skills s
       JOIN catalog_versions v ON v.skill = s.name AND v.version = s.current_version WHERE s.name = ?1`,
    )
    .bind(skill)
    .first<{ version: number; json: string }>();
  if (!row) return null;
  return { name: skill, version: row.version, config: readStoredConfig(skill, row.version, row.json, "D1") };
}

export async function listSkills(db: D1Database): Promise<SkillSummary[]> {
  const { results } = await db.prepare("SELECT name, current_version AS version, updated_at AS updatedAt FROM skills ORDER BY name").all<SkillSummary>();
  return results;
}

/** Newest first; history outlives deleteSkill, so a deleted skill still lists its versions. */
export async function listVersions(db: D1Database, skill: string): Promise<SkillVersionInfo[]> {
  const { results } = await db
    .prepare(
      `SELECT v.version, v.author, v.note, v.created_at AS createdAt,
              (s.current_version IS NOT NULL AND s.current_version = v.version) AS current
       FROM catalog_versions v LEFT JOIN skills s ON s.name = v.skill
       WHERE v.skill = ?1 ORDER BY v.version DESC`,
    )
    .bind(skill)
    .all<Omit<SkillVersionInfo, "current"> & { current: number }>();
  return results.map((row) => ({ ...row, current: row.current === 1 }));
}

export async function getVersion(db: D1Database, skill: string, version: number): Promise<StoredSkillVersion | null> {
  const row = await db
    .prepare("SELECT config_json AS json, author, note, created_at AS createdAt FROM catalog_versions WHERE skill = ?1 AND version = ?2")
    .bind(skill, version)
    .first<{ json: string; author: string; note: string | null; createdAt: number }>();
  if (!row) return null;
  const config = readStoredConfig(skill, version, row.json, "D1");
  return { name: skill, version, config, author: row.author, note: row.note, createdAt: row.createdAt };
}

/** Restoring never rewrites history: the old content becomes a new version; `note` is added to its own. */
export async function restoreVersion(db: D1Database, skill: string, version: number, author: string, note?: string): Promise<number> {
  const old = await getVersion(db, skill, version);
  if (!old) throw new SkillVersionNotFoundError(skill, version);
  return saveSkill(db, skill, old.config, { author, note: `restored from version ${version}${note ? `; ${note}` : ""}` });
}

/** Stops serving the skill; its versions stay for audit and restoreVersion. True if it existed. */
export async function deleteSkill(db: D1Database, skill: string): Promise<boolean> {
  const result = await db.prepare("DELETE FROM skills WHERE name = ?1").bind(skill).run();
  return result.meta.changes > 0;
}
