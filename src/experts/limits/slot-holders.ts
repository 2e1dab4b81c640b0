import { log } from "../../observability/logger";

/**
 * Which ExpertSession holds each skill-wide in-flight slot of a SkillLimiter, so the limiter can
 * ask whether the run still exists. A restart cuts runs off without settling them: before this
 * their slots stayed taken until each cut-off user's session woke again (the user's next call, or
 * its in-flight alarm up to the expert's timeout later), and every other user was refused
 * `runs_in_flight` although nothing ran.
 *
 * Only the holder knows. A session keeps the runs whose skill-wide slot it holds in memory, from
 * before it asks for the slot until the limiter has the run's settle (run-limits.ts), and a
 * restarted session starts with none: a holder that does not name a run no longer runs it, and
 * its slot is freed. A holder that cannot be asked keeps its slots: a live run never loses one.
 *
 * limit_slot_holders  run id → the holder session's id (hex), beside limit_counters/limit_runs
 *                     (limit-counters.ts). A table of its own, so the per-user counters the
 *                     sessions keep in the same schema need no column they would never fill.
 */
export const SLOT_HOLDERS_TABLE = `CREATE TABLE IF NOT EXISTS limit_slot_holders (
  run_id TEXT PRIMARY KEY,
  holder TEXT NOT NULL
) WITHOUT ROWID`;

/**
 * How long a holder's "still running it" is believed. A burst of refused calls then asks each
 * holder at most once in this window, and a session that restarts alone (not with the limiter,
 * whose fresh instance believes nothing yet) has its slots back at most this much later.
 */
export const CONFIRMED_FOR_MS = 1_000;
/** A holder that does not answer in this time keeps its slots (it may be alive and busy). */
export const HOLDER_ANSWER_MS = 5_000;

/** What the limiter asks of a holder: which of these runs it still holds a slot for. */
export interface SlotHolder {
  heldSlots(runIds: string[]): Promise<string[]>;
}

export class SlotHolders {
  /** Run id → when its holder last said it runs it (this instance only: a restart believes nothing). */
  private readonly confirmed = new Map<string, number>();
  private round: Promise<number> | undefined;

  constructor(
    private readonly sql: SqlStorage,
    /** The binding, not the class: the sessions sit above the limits and are known only as Env types them. */
    private readonly sessions: Env["EXPERT_SESSION"],
  ) {
    sql.exec(SLOT_HOLDERS_TABLE);
  }

  /** A slot just taken by `holder` (its session's id); asked about at the next refusal, like every other. */
  record(runId: string, holder: string): void {
    this.sql.exec(`INSERT OR REPLACE INTO limit_slot_holders (run_id, holder) VALUES (?, ?)`, runId, holder);
  }

  forget(runId: string): void {
    this.sql.exec(`DELETE FROM limit_slot_holders WHERE run_id = ?`, runId);
    this.confirmed.delete(runId);
  }

  /** Whether any slot has a known holder (a fresh instance checks them all once). */
  any(): boolean {
    return this.sql.exec(`SELECT 1 FROM limit_slot_holders LIMIT 1`).toArray().length > 0;
  }

  /**
   * Asks the holders of the slots not confirmed within CONFIRMED_FOR_MS whether they still run
   * them, and calls `free` for each run its holder no longer has (true when that freed a slot).
   * One round at a time: callers during a round share it. Returns how many were freed.
   */
  reclaim(free: (runId: string) => boolean): Promise<number> {
    this.round ??= this.ask(free).finally(() => {
      this.round = undefined;
    });
    return this.round;
  }

  private async ask(free: (runId: string) => boolean): Promise<number> {
    const started = Date.now();
    // A holder row whose slot was settled without it (a settle from before this table) is dropped.
    this.sql.exec(`DELETE FROM limit_slot_holders WHERE run_id NOT IN (SELECT run_id FROM limit_runs)`);
    const byHolder = new Map<string, string[]>();
    for (const { run_id, holder } of this.sql.exec<{ run_id: string; holder: string }>(`SELECT run_id, holder FROM limit_slot_holders`)) {
      if ((this.confirmed.get(run_id) ?? Number.NEGATIVE_INFINITY) > started - CONFIRMED_FOR_MS) continue;
      byHolder.set(holder, [...(byHolder.get(holder) ?? []), run_id]);
    }
    if (byHolder.size === 0) return 0;
    const answers = await Promise.all([...byHolder].map(async ([holder, runIds]) => ({ runIds, held: await this.heldBy(holder, runIds) })));
    const now = Date.now();
    let freed = 0;
    for (const { runIds, held } of answers) {
      for (const runId of runIds) {
        if (held === null || held.has(runId)) {
          this.confirmed.set(runId, now);
          continue;
        }
        if (free(runId)) freed += 1;
        this.forget(runId);
      }
    }
    if (freed > 0) log("info", "skill-wide slots of runs that no longer exist freed", { freed });
    return freed;
  }

  private holder(id: string): SlotHolder {
    return this.sessions.get(this.sessions.idFromString(id));
  }

  /** The runs of `runIds` the holder still holds; null when it cannot say (kept, asked again later). */
  private async heldBy(holder: string, runIds: string[]): Promise<Set<string> | null> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      const timedOut = new Promise<null>((resolve) => {
        timer = setTimeout(() => resolve(null), HOLDER_ANSWER_MS);
      });
      const held = await Promise.race([this.holder(holder).heldSlots(runIds), timedOut]);
      if (held === null) log("warn", "a slot holder did not answer; its slots are kept", { runs: runIds.length });
      return held === null ? null : new Set(held);
    } catch (error) {
      log("warn", "a slot holder could not be asked; its slots are kept", {
        runs: runIds.length,
        error: error instanceof Error ? error.message : String(error),
      });
      return null;
    } finally {
      if (timer !== undefined) clearTimeout(timer);
    }
  }
}
