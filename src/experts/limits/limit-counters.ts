import { log } from "../../observability/logger";
import { type CounterRow, type OwnedCounterRow, type Subject, underLimits, writeCounters, ZERO_COUNTERS } from "./usage-counters";

/**
 * Usage counters held by the Durable Object that owns their subject (a user's ExpertSession for
 * `user:<skill>:<user>`, the skill's SkillLimiter for `skill:<skill>`), in its own SQLite:
 *
 * limit_counters  (subject, UTC day) → runs, tokens, cost_usd, in_flight; `version` counts changes
 *                 and `flushed_version` is the version last written to D1's `usage_counters`.
 * limit_runs      the runs holding an in-flight slot (run id, subject, day), so settling a run is
 *                 idempotent (a retried or duplicated settle frees its slot once) and a restart can
 *                 free what a cut-off run held.
 *
 * Every method is synchronous: a Durable Object runs one piece of JavaScript at a time, so a
 * check and its increment with no await between them are atomic against every other call into
 * the object; of two calls racing for the last unit exactly one gets it, with no round trip.
 * D1 gets a copy later (`flush`, from the object's alarm), for the admin's usage pages.
 */
export const LIMIT_COUNTER_TABLES = [
  `CREATE TABLE IF NOT EXISTS limit_counters (
     subject TEXT NOT NULL,
     day TEXT NOT NULL,
     runs INTEGER NOT NULL DEFAULT 0,
     tokens INTEGER NOT NULL DEFAULT 0,
     cost_usd REAL NOT NULL DEFAULT 0,
     in_flight INTEGER NOT NULL DEFAULT 0,
     updated_at INTEGER NOT NULL,
     version INTEGER NOT NULL DEFAULT 0,
     flushed_version INTEGER NOT NULL DEFAULT 0,
     PRIMARY KEY (subject, day)
   ) WITHOUT ROWID`,
  `CREATE TABLE IF NOT EXISTS limit_runs (
     run_id TEXT NOT NULL,
     subject TEXT NOT NULL,
     day TEXT NOT NULL,
     PRIMARY KEY (run_id, subject)
   ) WITHOUT ROWID`,
] as const;

/** Rows of days before this many days ago leave the object once D1 has them (D1 keeps the history). */
const KEEP_DAYS = 2;
const DAY_MS = 86_400_000;

type StoredRow = OwnedCounterRow & { version: number };

export class LimitCounters {
  private flushing: Promise<number> | undefined;

  constructor(private readonly sql: SqlStorage) {}

  /**
   * Counts run `runId` in `subject`'s row of `day` and takes an in-flight slot, when every
   * counter is under its limit. Returns null when counted, or the row that refused it.
   */
  reserve(runId: string, subject: Subject, day: string, now: number): CounterRow | null {
    const row = this.row(subject.key, day);
    if (!underLimits(row, subject.limits)) return row;
    this.sql.exec(
      `INSERT INTO limit_counters (subject, day, runs, in_flight, updated_at, version) VALUES (?1, ?2, 1, 1, ?3, 1)
       ON CONFLICT (subject, day) DO UPDATE SET runs = runs + 1, in_flight = in_flight + 1, updated_at = ?3, version = version + 1`,
      subject.key,
      day,
      now,
    );
    this.sql.exec(`INSERT OR REPLACE INTO limit_runs (run_id, subject, day) VALUES (?, ?, ?)`, runId, subject.key, day);
    return null;
  }

  /**
   * Adds the run's tokens and cost to the day it was counted in and frees its slot; a second
   * settle does nothing. Returns whether the run held a slot.
   */
  settle(runId: string, tokens: number, costUsd: number, now: number): boolean {
    const held = this.held(runId);
    for (const { subject, day } of held) {
      this.sql.exec(
        `UPDATE limit_counters SET tokens = tokens + ?1, cost_usd = cost_usd + ?2, in_flight = max(in_flight - 1, 0), updated_at = ?3, version = version + 1
         WHERE subject = ?4 AND day = ?5`,
        tokens,
        costUsd,
        now,
        subject,
        day,
      );
    }
    this.sql.exec(`DELETE FROM limit_runs WHERE run_id = ?`, runId);
    return held.length > 0;
  }

  /** Undoes a reservation whose run never started (a later subject refused it): not counted at all. */
  release(runId: string, now: number): void {
    for (const { subject, day } of this.held(runId)) {
      this.sql.exec(
        `UPDATE limit_counters SET runs = max(runs - 1, 0), in_flight = max(in_flight - 1, 0), updated_at = ?1, version = version + 1 WHERE subject = ?2 AND day = ?3`,
        now,
        subject,
        day,
      );
    }
    this.sql.exec(`DELETE FROM limit_runs WHERE run_id = ?`, runId);
  }

  /** Frees the slot of every run holding one (the run stays counted; its tokens are unknown). Returns how many. */
  settleAll(now: number): number {
    const runs = this.sql.exec<{ run_id: string }>(`SELECT DISTINCT run_id FROM limit_runs`).toArray();
    for (const { run_id } of runs) this.settle(run_id, 0, 0, now);
    return runs.length;
  }

  row(subject: string, day: string): CounterRow {
    return (
      this.sql.exec<CounterRow>(`SELECT runs, tokens, cost_usd, in_flight FROM limit_counters WHERE subject = ? AND day = ?`, subject, day).toArray()[0] ??
      ZERO_COUNTERS
    );
  }

  /** Whether a row changed since it was last written to D1. */
  dirty(): boolean {
    return this.sql.exec(`SELECT 1 FROM limit_counters WHERE version > flushed_version LIMIT 1`).toArray().length > 0;
  }

  /**
   * Writes every row changed since its last flush to D1 in one batch, then forgets rows of past
   * days D1 has. One flush at a time per object; never throws (a failure is logged and the rows
   * stay changed, so the next alarm writes them). Returns the rows written.
   */
  async flush(db: D1Database, now = Date.now()): Promise<number> {
    this.flushing ??= this.flushOnce(db, now).finally(() => {
      this.flushing = undefined;
    });
    return this.flushing;
  }

  private async flushOnce(db: D1Database, now: number): Promise<number> {
    const rows = this.sql
      .exec<StoredRow>(`SELECT subject, day, runs, tokens, cost_usd, in_flight, updated_at, version FROM limit_counters WHERE version > flushed_version`)
      .toArray();
    try {
      await writeCounters(
        db,
        rows.map(({ version: _version, ...row }) => row),
      );
    } catch (error) {
      log("error", "usage counters not written to D1; kept for the next alarm", { rows: rows.length, error: String(error) });
      return 0;
    }
    // A row that changed while D1 was written keeps a version above the one written.
    for (const row of rows) this.sql.exec(`UPDATE limit_counters SET flushed_version = ? WHERE subject = ? AND day = ?`, row.version, row.subject, row.day);
    const cutoff = new Date(now - KEEP_DAYS * DAY_MS).toISOString().slice(0, 10);
    this.sql.exec(`DELETE FROM limit_counters WHERE day < ? AND version = flushed_version AND in_flight = 0`, cutoff);
    return rows.length;
  }

  private held(runId: string): Array<{ subject: string; day: string }> {
    return this.sql.exec<{ subject: string; day: string }>(`SELECT subject, day FROM limit_runs WHERE run_id = ?`, runId).toArray();
  }
}
