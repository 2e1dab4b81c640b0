import { DEFAULT_RETENTION_DAYS } from "../../catalog/catalog-schema";
import { loadSkill } from "../../catalog/compiled-skill-cache";
import { log } from "../../observability/logger";

/**
 * Retention and a member's own deletions in one ExpertSession's SQLite. Runs go by when they
 * started, threads by when they were last used; a thread's turns go with it, a run's steps with it.
 */

export const DAY_MS = 86_400_000;

export type ThreadSummary = {
  id: string;
  expert: string;
  created_at: number;
  updated_at: number;
  turns: number;
};

export interface PurgeCount {
  runs: number;
  threads: number;
}

/**
 * One session's retention pass as of `now`: deletes runs and threads older than the skill's
 * `retention_days` (and index rows still waiting from that long ago, logged by the outbox), and
 * says when the oldest remaining row expires: at most a day away, so a shortened retention
 * applies within a day; null while the session is empty.
 */
export async function purgeSession(
  env: Env,
  ctx: DurableObjectState,
  outbox: { expire(cutoff: number): void },
  now: number,
): Promise<{ purged: PurgeCount; retentionDue: number | null }> {
  const sql = ctx.storage.sql;
  const skillName = sessionSkill(ctx.id.name) ?? sql.exec<{ skill: string }>(`SELECT skill FROM runs LIMIT 1`).toArray()[0]?.skill;
  const skill = skillName === undefined ? null : await loadSkill(env, skillName);
  const retentionMs = (skill?.config.retention_days ?? DEFAULT_RETENTION_DAYS) * DAY_MS;
  const purged = ctx.storage.transactionSync(() => purgeBefore(sql, now - retentionMs));
  outbox.expire(now - retentionMs);
  const oldest = oldestKept(sql);
  if (purged.runs + purged.threads > 0) log("info", "session retention", { ...purged });
  return { purged, retentionDue: oldest === null ? null : Math.max(Math.min(oldest + retentionMs, now + DAY_MS), now + 60_000) };
}

/** The skill in a session's name (tenant:skill:user, URI-encoded parts), when the id carries its name. */
function sessionSkill(name: string | undefined): string | undefined {
  const part = name?.split(":")[1];
  return part === undefined ? undefined : decodeURIComponent(part);
}

/** Deletes runs started and threads last used before `cutoff` (epoch ms). Never a running run. */
export function purgeBefore(sql: SqlStorage, cutoff: number): PurgeCount {
  const runs = sql.exec<{ id: string }>(`SELECT id FROM runs WHERE started_at < ? AND outcome != 'running'`, cutoff).toArray();
  for (const { id } of runs) deleteRunRows(sql, id);
  const threads = sql.exec<{ id: string }>(`SELECT id FROM threads WHERE updated_at < ?`, cutoff).toArray();
  for (const { id } of threads) deleteThreadRows(sql, id);
  // Turns appended by a run that was still going when its thread was deleted.
  sql.exec(`DELETE FROM thread_turns WHERE thread_id NOT IN (SELECT id FROM threads)`);
  return { runs: runs.length, threads: threads.length };
}

/** When the oldest remaining row expires, or null when the session holds nothing to expire. */
export function oldestKept(sql: SqlStorage): number | null {
  const row = sql
    .exec<{ oldest: number | null }>(`SELECT min(t) AS oldest FROM (SELECT min(started_at) AS t FROM runs UNION ALL SELECT min(updated_at) AS t FROM threads)`)
    .one();
  return row.oldest;
}

export function listThreads(sql: SqlStorage, limit: number): ThreadSummary[] {
  return sql
    .exec<ThreadSummary>(
      `SELECT t.id, t.expert, t.created_at, t.updated_at, (SELECT count(*) FROM thread_turns WHERE thread_id = t.id) AS turns
       FROM threads t ORDER BY t.updated_at DESC, t.id LIMIT ?`,
      limit,
    )
    .toArray();
}

export function deleteThreadRows(sql: SqlStorage, threadId: string): boolean {
  const found = sql.exec(`SELECT 1 FROM threads WHERE id = ?`, threadId).toArray().length > 0;
  sql.exec(`DELETE FROM thread_turns WHERE thread_id = ?`, threadId);
  // A question the thread's run was waiting on goes with the thread it would resume.
  sql.exec(`DELETE FROM paused_runs WHERE thread_id = ?`, threadId);
  sql.exec(`DELETE FROM threads WHERE id = ?`, threadId);
  return found;
}

/** A run in flight is not deleted (its row is rewritten when it ends). */
export function deleteRunRows(sql: SqlStorage, runId: string): boolean {
  const found = sql.exec(`SELECT 1 FROM runs WHERE id = ? AND outcome != 'running'`, runId).toArray().length > 0;
  if (!found) return false;
  sql.exec(`DELETE FROM run_steps WHERE run_id = ?`, runId);
  sql.exec(`DELETE FROM runs WHERE id = ?`, runId);
  // An ended task of this run holds the call's arguments and its result: they go with the run.
  sql.exec(`DELETE FROM tasks WHERE run_id = ? AND status <> 'working'`, runId);
  return true;
}
