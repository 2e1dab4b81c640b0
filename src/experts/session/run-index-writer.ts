import { log } from "../../observability/logger";
import { D1_TABLES } from "../../storage-keys";
import type { StepRecord } from "../run/expert-types";

/** One row of D1 `run_index` (migrations/0003_run_index.sql): names, counts and times only. */
export interface RunIndexRow {
  runId: string;
  skill: string;
  expert: string;
  userId: string;
  userLogin: string | null;
  userEmail: string | null;
  threadId: string | null;
  catalogVersion: number | null;
  provider: string;
  model: string;
  outcome: string;
  traceId: string;
  startedAt: number;
  endedAt: number;
  elapsedMs: number;
  steps: number;
  inputTokens: number;
  outputTokens: number;
  toolCalls: number;
  toolErrors: number;
  downstreamBytes: number;
  cost: number | null;
}

/** D1 binds at most 100 parameters per statement; a tool-call row binds 10. */
const CALLS_PER_INSERT = 10;

/** Statuses that count as a downstream server's error (refusals and cancellations are ours). */
const SERVER_ERROR_STATUSES = new Set(["error"]);

/**
 * Writes a finished run's summary and its downstream calls to the tenant's index in one batch.
 * Never throws: the run is already answered and recorded in the session; a lost index row is
 * logged, not retried into the caller's latency.
 */
export async function writeRunIndex(db: D1Database, row: RunIndexRow, steps: readonly StepRecord[]): Promise<void> {
  const calls = steps.flatMap((step) => step.toolCalls).filter((call) => call.server !== undefined && call.tool !== undefined);
  const statements = [
    db
      .prepare(
        `INSERT OR REPLACE INTO ${D1_TABLES.runIndex} (run_id, skill, expert, user_id, user_login, user_email, thread_id, catalog_version, provider, model,
           outcome, trace_id, started_at, ended_at, elapsed_ms, steps, input_tokens, output_tokens, tool_calls, tool_errors, downstream_bytes, cost)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .bind(
        row.runId,
        row.skill,
        row.expert,
        row.userId,
        row.userLogin,
        row.userEmail,
        row.threadId,
        row.catalogVersion,
        row.provider,
        row.model,
        row.outcome,
        row.traceId,
        row.startedAt,
        row.endedAt,
        row.elapsedMs,
        row.steps,
        row.inputTokens,
        row.outputTokens,
        row.toolCalls,
        row.toolErrors,
        row.downstreamBytes,
        row.cost,
      ),
  ];
  for (let i = 0; i < calls.length; i += CALLS_PER_INSERT) {
    const batch = calls.slice(i, i + CALLS_PER_INSERT);
    statements.push(
      db
        .prepare(
          `INSERT OR REPLACE INTO ${D1_TABLES.runToolCalls} (run_id, seq, skill, server_id, tool, status, elapsed_ms, bytes, error, at)
           VALUES ${batch.map(() => "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)").join(", ")}`,
        )
        .bind(
          ...batch.flatMap((call, offset) => [
            row.runId,
            i + offset,
            row.skill,
            call.server ?? "",
            call.tool ?? "",
            call.status,
            call.elapsedMs,
            call.bytes,
            SERVER_ERROR_STATUSES.has(call.status) ? (call.error ?? null) : null,
            row.endedAt,
          ]),
        ),
    );
  }
  try {
    await db.batch(statements);
  } catch (error) {
    log("error", "run index write failed", { runId: row.runId, skill: row.skill, error: String(error) });
  }
}

/** Server errors among a run's tool calls. */
export function toolErrorCount(steps: readonly StepRecord[]): number {
  return steps.reduce((sum, step) => sum + step.toolCalls.filter((call) => SERVER_ERROR_STATUSES.has(call.status)).length, 0);
}

/**
 * Index writes still in flight, so a test (or a shutdown) can wait for them to land instead of
 * guessing how long they take.
 */
export class PendingIndexWrites {
  private readonly pending = new Set<Promise<void>>();

  track(write: Promise<void>): Promise<void> {
    const tracked = write.finally(() => this.pending.delete(tracked));
    this.pending.add(tracked);
    return tracked;
  }

  async settled(): Promise<void> {
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
  }
}

/**
 * Test seam: holds index writes until the promise settles, so a test can see the call answered
 * while its index write has not happened yet. Only code sets it; the session honours it only
 * when ENVIRONMENT is "test".
 */
let heldUntil: Promise<unknown> | undefined;

export function holdRunIndexWritesForTests(until: Promise<unknown> | undefined): void {
  heldUntil = until;
}

export function runIndexWriteHold(): Promise<unknown> | undefined {
  return heldUntil;
}
