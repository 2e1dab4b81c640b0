import { DEFAULT_RETENTION_DAYS } from "../../catalog/catalog-schema";
import { getSkill, listSkills } from "../../catalog/catalog-store";
import { log } from "../../observability/logger";
import { D1_TABLES } from "../../storage-keys";
import { deleteCountersBefore, utcDay } from "../limits/usage-counters";
import { DAY_MS } from "./session-retention";

/**
 * Tenant-wide run rows in D1 that outlive their skill's retention: the run index (when this
 * deployment has one) and usage counters. The sessions' own runs and threads expire through
 * each ExpertSession's alarm (purgeExpired); this is the cron trigger's part.
 */
const RUN_INDEX_TABLES = [
  // table, the column naming the skill, the column with the run's time
  { table: D1_TABLES.runIndex, skill: "skill", at: "started_at" },
  { table: D1_TABLES.runToolCalls, skill: "skill", at: "at" },
] as const;

export interface SweepCount {
  indexRows: number;
  counterRows: number;
}

export async function sweepRetention(db: D1Database, now: number): Promise<SweepCount> {
  const skills = await listSkills(db);
  const retention = new Map<string, number>();
  for (const { name } of skills) retention.set(name, (await getSkill(db, name))?.config.retention_days ?? DEFAULT_RETENTION_DAYS);
  const existing = new Set(
    (
      await db
        .prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name IN (${RUN_INDEX_TABLES.map(() => "?").join(", ")})`)
        .bind(...RUN_INDEX_TABLES.map((t) => t.table))
        .all<{ name: string }>()
    ).results.map((row) => row.name),
  );
  let indexRows = 0;
  for (const { table, skill, at } of RUN_INDEX_TABLES) {
    // No index on this deployment yet: nothing to sweep there.
    if (!existing.has(table)) continue;
    const statements = [...retention].map(([name, days]) =>
      db.prepare(`DELETE FROM ${table} WHERE ${skill} = ?1 AND ${at} < ?2`).bind(name, now - days * DAY_MS),
    );
    // Runs of skills no longer in the catalog keep the default retention.
    const live = [...retention.keys()];
    statements.push(
      db
        .prepare(`DELETE FROM ${table} WHERE ${at} < ?1 AND ${skill} NOT IN (SELECT value FROM json_each(?2))`)
        .bind(now - DEFAULT_RETENTION_DAYS * DAY_MS, JSON.stringify(live)),
    );
    for (const result of await db.batch(statements)) indexRows += result.meta.changes;
  }
  const longest = Math.max(DEFAULT_RETENTION_DAYS, ...retention.values());
  const counterRows = await deleteCountersBefore(db, utcDay(now - longest * DAY_MS));
  log("info", "retention sweep", { indexRows, counterRows });
  return { indexRows, counterRows };
}
