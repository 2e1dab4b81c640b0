import { z } from "zod";
import { log } from "../../observability/logger";
import { RECORDED_OUTCOMES } from "../core/run-types";
import { type RunIndexEntry, runIndexStatementCount, writeRunIndex } from "./run-index-writer";

/**
 * The session's run index outbox (table `run_index_outbox`, session-schema.ts): a finished run's
 * index row waits here, written synchronously to the session's own SQLite, until the session's
 * alarm sends every waiting row to D1 in a few batches. So no D1 write shares the call's time
 * (under `wrangler dev` the local D1 competes for the same CPU as the next call),
 * a burst of runs costs one batch, and a row outlives an eviction or a D1 outage.
 *
 * The row is snapshotted at the run's end rather than rebuilt from `runs`/`run_steps` at flush
 * time: the model id and the cost come from the catalog as it was when the run ended (prices
 * and defaults may change before the flush), and the member may delete the run meanwhile.
 */

/** How long after the first waiting row the flush is due, so runs that end together go as one batch. */
export const RUN_INDEX_FLUSH_DELAY_MS = 1_000;
/** A failed flush is retried after 5 s, doubling to at most 10 minutes; rows wait meanwhile. */
const RETRY_FIRST_MS = 5_000;
const RETRY_MAX_MS = 600_000;
/**
 * Bounds of one flush: runs per D1 batch and statements per batch (a batch is one transaction,
 * and every statement counts against the invocation's D1 query limit), and batches per alarm.
 * What is left waits for an alarm set right after.
 */
const RUNS_PER_BATCH = 50;
const STATEMENTS_PER_BATCH = 40;
const BATCHES_PER_FLUSH = 4;

const rowSchema = z.object({
  runId: z.string(),
  skill: z.string(),
  expert: z.string(),
  userId: z.string(),
  userLogin: z.string().nullable(),
  userEmail: z.string().nullable(),
  threadId: z.string().nullable(),
  catalogVersion: z.number().int().nullable(),
  provider: z.string(),
  model: z.string(),
  outcome: z.enum(RECORDED_OUTCOMES),
  traceId: z.string(),
  startedAt: z.number(),
  endedAt: z.number(),
  elapsedMs: z.number(),
  steps: z.number().int(),
  inputTokens: z.number(),
  outputTokens: z.number(),
  toolCalls: z.number().int(),
  toolErrors: z.number().int(),
  downstreamBytes: z.number(),
  cost: z.number().nullable(),
  // Absent from entries queued before these columns existed.
  budgetExhausted: z.string().nullable().default(null),
  refusedCalls: z.number().int().default(0),
});
const callSchema = z.object({
  server: z.string(),
  tool: z.string(),
  status: z.string(),
  elapsedMs: z.number(),
  bytes: z.number(),
  error: z.string().nullable(),
});
// `retries` is absent from entries queued before the log line moved here.
const entrySchema = z.object({ row: rowSchema, calls: z.array(callSchema), retries: z.number().int().default(0) });

/** A run's index entry as it waits here, with what only its log line needs. */
export interface QueuedRun extends RunIndexEntry {
  /** Model calls retried (usage.retries); not a D1 column. */
  retries: number;
}

export interface FlushCount {
  /** Runs written to D1 by this flush. */
  written: number;
  /** Runs still waiting after it (failed, or beyond one flush's bound). */
  waiting: number;
}

type OutboxRow = { seq: number; run_id: string; entry: string };
type Waiting = { seq: number; entry: QueuedRun };

export class RunIndexOutbox {
  private flushing: Promise<FlushCount> | undefined;

  /** `flushDelayMs` is read at each use, so a test can lengthen it for an object already running. */
  constructor(
    private readonly sql: SqlStorage,
    private readonly flushDelayMs: () => number = () => RUN_INDEX_FLUSH_DELAY_MS,
  ) {}

  /** Queues runs' index rows (replacing a waiting row of the same run). */
  add(entries: readonly QueuedRun[], now: number): void {
    for (const entry of entries) {
      this.sql.exec(
        `INSERT OR REPLACE INTO run_index_outbox (run_id, entry, started_at, queued_at, attempts, retry_at) VALUES (?, ?, ?, ?, 0, 0)`,
        entry.row.runId,
        JSON.stringify(entry),
        entry.row.startedAt,
        now,
      );
    }
  }

  /**
   * When the next flush is due: the delay after the oldest waiting row, but not before the
   * retry time a failed flush set. Null when nothing waits.
   */
  dueAt(): number | null {
    const { first, retry } = this.sql
      .exec<{ first: number | null; retry: number | null }>(`SELECT min(queued_at) AS first, max(retry_at) AS retry FROM run_index_outbox`)
      .one();
    return first === null ? null : Math.max(first + this.flushDelayMs(), retry ?? 0);
  }

  waiting(): number {
    return this.sql.exec<{ n: number }>(`SELECT count(*) AS n FROM run_index_outbox`).one().n;
  }

  /**
   * Sends waiting rows to D1, oldest first, in bounded batches; a written batch leaves the
   * outbox, a failed one stays (with every row after it) until the retry time. One flush at a
   * time per object. Never throws: a failure is logged and retried.
   */
  async flush(db: D1Database): Promise<FlushCount> {
    this.flushing ??= this.flushOnce(db).finally(() => {
      this.flushing = undefined;
    });
    return this.flushing;
  }

  /**
   * Drops rows of runs that started before `cutoff` (the retention cutoff: the daily sweep would
   * delete them from D1 anyway), which only happens when flushes have failed for that long.
   * Logged, never silent.
   */
  expire(cutoff: number): number {
    const dropped = this.sql.exec(`DELETE FROM run_index_outbox WHERE started_at < ?`, cutoff).rowsWritten;
    if (dropped > 0) log("error", "run index rows dropped unwritten: past retention", { runs: dropped });
    return dropped;
  }

  private async flushOnce(db: D1Database): Promise<FlushCount> {
    let written = 0;
    for (const batch of batches(this.read(RUNS_PER_BATCH * BATCHES_PER_FLUSH)).slice(0, BATCHES_PER_FLUSH)) {
      try {
        await writeRunIndex(
          db,
          batch.map((waiting) => waiting.entry),
        );
      } catch (error) {
        const { attempts, retryInMs } = this.failed(
          batch.map((waiting) => waiting.seq),
          Date.now(),
        );
        // Counts only: a row names users, and the D1 error is about the statement, not its values.
        log("error", "run index flush failed; rows kept for a retry", {
          runs: batch.length,
          waiting: this.waiting(),
          attempts,
          retryInMs,
          error: String(error),
        });
        return { written, waiting: this.waiting() };
      }
      this.sql.exec(`DELETE FROM run_index_outbox WHERE seq IN (SELECT value FROM json_each(?))`, JSON.stringify(batch.map((waiting) => waiting.seq)));
      logFinishedRuns(batch);
      written += batch.length;
    }
    return { written, waiting: this.waiting() };
  }

  /** Up to `limit` waiting rows, oldest first; a row that does not parse is logged and dropped. */
  private read(limit: number): Waiting[] {
    const rows = this.sql.exec<OutboxRow>(`SELECT seq, run_id, entry FROM run_index_outbox ORDER BY queued_at, seq LIMIT ?`, limit).toArray();
    const waiting: Waiting[] = [];
    for (const row of rows) {
      const entry = parseEntry(row.entry);
      if (entry) {
        waiting.push({ seq: row.seq, entry });
        continue;
      }
      // Only this module writes the table; a row it cannot read would fail every flush forever.
      log("error", "run index row unreadable, dropped", { runId: row.run_id });
      this.sql.exec(`DELETE FROM run_index_outbox WHERE seq = ?`, row.seq);
    }
    return waiting;
  }

  /** Counts the failed batch's attempt and holds every waiting row until the backoff has passed. */
  private failed(seqs: readonly number[], now: number): { attempts: number; retryInMs: number } {
    this.sql.exec(`UPDATE run_index_outbox SET attempts = attempts + 1 WHERE seq IN (SELECT value FROM json_each(?))`, JSON.stringify(seqs));
    const attempts = this.sql.exec<{ attempts: number | null }>(`SELECT max(attempts) AS attempts FROM run_index_outbox`).one().attempts ?? 1;
    const retryInMs = Math.min(RETRY_FIRST_MS * 2 ** Math.min(attempts - 1, 20), RETRY_MAX_MS);
    this.sql.exec(`UPDATE run_index_outbox SET retry_at = ?`, now + retryInMs);
    return { attempts, retryInMs };
  }
}

/**
 * The runs' log line (Workers Logs), one per written batch rather than one per run: under
 * `wrangler dev` every console call is forwarded through the inspector, which cost about 1 ms of
 * the object's CPU per run when each run wrote its own line as it ended (`npm run bench -- --only=AB`).
 * Written once the rows left the outbox, so a retried flush never logs a run twice; a run whose
 * row expires unwritten is counted in the error line of `expire` instead. Names and counts only,
 * as the index row: no user, arguments or answer.
 */
function logFinishedRuns(batch: readonly Waiting[]): void {
  log("info", "expert runs finished", {
    runs: batch.map(({ entry: { row, retries } }) => ({
      runId: row.runId,
      skill: row.skill,
      expert: row.expert,
      outcome: row.outcome,
      steps: row.steps,
      toolCalls: row.toolCalls,
      toolErrors: row.toolErrors,
      retries,
      elapsedMs: row.elapsedMs,
      traceId: row.traceId,
    })),
  });
}

function parseEntry(text: string): QueuedRun | undefined {
  try {
    const parsed = entrySchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/** Consecutive runs in batches of at most RUNS_PER_BATCH runs and about STATEMENTS_PER_BATCH statements (a run is never split). */
function batches(waiting: readonly Waiting[]): Waiting[][] {
  const out: Waiting[][] = [];
  let batch: Waiting[] = [];
  let calls = 0;
  for (const item of waiting) {
    const grown = runIndexStatementCount(batch.length + 1, calls + item.entry.calls.length);
    if (batch.length > 0 && (batch.length >= RUNS_PER_BATCH || grown > STATEMENTS_PER_BATCH)) {
      out.push(batch);
      batch = [];
      calls = 0;
    }
    batch.push(item);
    calls += item.entry.calls.length;
  }
  if (batch.length > 0) out.push(batch);
  return out;
}

/**
 * Test seam: a workerd test lengthens the flush delay so that only the alarm it runs itself
 * (runDurableObjectAlarm) flushes, never a real one firing mid-test. Only code can set it, and
 * the session honours it only when ENVIRONMENT is "test".
 */
let delayForTests: number | undefined;

export function setRunIndexFlushDelayForTests(delayMs: number | undefined): void {
  delayForTests = delayMs;
}

export function runIndexFlushDelay(env: Env): number {
  return env.ENVIRONMENT === "test" ? (delayForTests ?? RUN_INDEX_FLUSH_DELAY_MS) : RUN_INDEX_FLUSH_DELAY_MS;
}
