import { D1_TABLES } from "../../storage-keys";
import type { RecordedOutcome, StepRecord } from "../core/run-types";

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
  /** A run's outcome, or `interrupted` for one a session restart cut off. */
  outcome: RecordedOutcome;
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
  /** Which budget stopped the run (`budget_exhausted`), else null (migrations/0005). */
  budgetExhausted: string | null;
  /** Calls refused because the expert does not have the tool: blocked, unlisted, or named by text the model read. */
  refusedCalls: number;
}

/** One row of D1 `run_tool_calls` before it has its run id and place: no arguments, no result. */
export interface IndexedToolCall {
  server: string;
  tool: string;
  status: string;
  elapsedMs: number;
  bytes: number;
  /** The server's error (already redacted and cut by the trace); null for any other status. */
  error: string | null;
}

/** What one run puts in the index: its summary row and its downstream calls. */
export interface RunIndexEntry {
  row: RunIndexRow;
  calls: IndexedToolCall[];
}

/** D1 binds at most 100 parameters per statement: a run row binds 24, a tool-call row 10. */
const RUNS_PER_INSERT = 4;
const CALLS_PER_INSERT = 10;

/** Statuses that count as a downstream server's error (refusals and cancellations are ours). */
const SERVER_ERROR_STATUSES = new Set(["error"]);

/** The downstream calls of a run's (traced) steps, as the index keeps them. */
export function indexedToolCalls(steps: readonly StepRecord[]): IndexedToolCall[] {
  return steps
    .flatMap((step) => step.toolCalls)
    .filter((call) => call.server !== undefined && call.tool !== undefined)
    .map((call) => ({
      server: call.server ?? "",
      tool: call.tool ?? "",
      status: call.status,
      elapsedMs: call.elapsedMs,
      bytes: call.bytes,
      error: SERVER_ERROR_STATUSES.has(call.status) ? (call.error ?? null) : null,
    }));
}

/**
 * Calls refused before any server was chosen: the model named a tool this expert does not have
 * (blocked, not whitelisted, or named by text it read: a possible injection). A call refused for
 * the tool-call budget names its server and is not one of them.
 */
export function refusedCallCount(steps: readonly StepRecord[]): number {
  return steps.reduce((sum, step) => sum + step.toolCalls.filter((call) => call.status === "refused" && call.server === undefined).length, 0);
}

/** Server errors among a run's tool calls. */
export function toolErrorCount(steps: readonly StepRecord[]): number {
  return steps.reduce((sum, step) => sum + step.toolCalls.filter((call) => SERVER_ERROR_STATUSES.has(call.status)).length, 0);
}

/**
 * The statements that write these runs' summaries and downstream calls, several rows per
 * statement. Idempotent (INSERT OR REPLACE), so a batch sent twice leaves the same rows.
 */
export function runIndexStatements(db: D1Database, entries: readonly RunIndexEntry[]): D1PreparedStatement[] {
  const statements: D1PreparedStatement[] = [];
  for (let i = 0; i < entries.length; i += RUNS_PER_INSERT) {
    const rows = entries.slice(i, i + RUNS_PER_INSERT).map((entry) => entry.row);
    statements.push(
      db
        .prepare(
          `INSERT OR REPLACE INTO ${D1_TABLES.runIndex} (run_id, skill, expert, user_id, user_login, user_email, thread_id, catalog_version, provider, model,
             outcome, trace_id, started_at, ended_at, elapsed_ms, steps, input_tokens, output_tokens, tool_calls, tool_errors, downstream_bytes, cost,
             budget_exhausted, refused_calls)
           VALUES ${rows.map(() => "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)").join(", ")}`,
        )
        .bind(
          ...rows.flatMap((row) => [
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
            row.budgetExhausted,
            row.refusedCalls,
          ]),
        ),
    );
  }
  const calls = entries.flatMap(({ row, calls }) => calls.map((call, seq) => ({ row, call, seq })));
  for (let i = 0; i < calls.length; i += CALLS_PER_INSERT) {
    const batch = calls.slice(i, i + CALLS_PER_INSERT);
    statements.push(
      db
        .prepare(
          `INSERT OR REPLACE INTO ${D1_TABLES.runToolCalls} (run_id, seq, skill, server_id, tool, status, elapsed_ms, bytes, error, at)
           VALUES ${batch.map(() => "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)").join(", ")}`,
        )
        .bind(
          ...batch.flatMap(({ row, call, seq }) => [
            row.runId,
            seq,
            row.skill,
            call.server,
            call.tool,
            call.status,
            call.elapsedMs,
            call.bytes,
            call.error,
            row.endedAt,
          ]),
        ),
    );
  }
  return statements;
}

/** How many statements `runIndexStatements` makes for these runs (to bound a batch before building it). */
export function runIndexStatementCount(runs: number, calls: number): number {
  return Math.ceil(runs / RUNS_PER_INSERT) + Math.ceil(calls / CALLS_PER_INSERT);
}

/** Writes the runs in one D1 batch (one transaction: all of it or none). Throws when D1 refuses it. */
export async function writeRunIndex(db: D1Database, entries: readonly RunIndexEntry[]): Promise<void> {
  if (entries.length === 0) return;
  await db.batch(runIndexStatements(db, entries));
}
