import { z } from "zod";
import { base64Url, base64UrlDecode } from "../base64url";
import { SKILL_NAME_PATTERN, TOOL_NAME_PATTERN } from "../catalog/catalog-schema";
import { RECORDED_OUTCOMES, type RecordedOutcome } from "../experts/core/run-types";
import type { RunIndexRow } from "../experts/records/run-index-writer";
import { namespacedToolName } from "../experts/tools/tool-names";
import { D1_TABLES } from "../storage-keys";
import { timeParam, type QueryFixes } from "./admin-query";

/** Every outcome a run is recorded with (`interrupted`: a run a session restart cut off). */
export const OUTCOMES = RECORDED_OUTCOMES;

/** Where the next page starts: the last row's start time and run id (ties broken by id). */
const cursorSchema = z.object({ s: z.number().int(), id: z.string().min(1).max(100) }).strict();
type Cursor = z.output<typeof cursorSchema>;

const cursorParam = z
  .string()
  .max(400)
  .transform((value, ctx) => {
    try {
      const decoded = cursorSchema.safeParse(JSON.parse(new TextDecoder().decode(base64UrlDecode(value))));
      if (decoded.success) return decoded.data;
    } catch {
      // Not base64url JSON: refused below like any other unreadable cursor.
    }
    ctx.addIssue({ code: "custom", message: "is not a cursor this API returned" });
    return z.NEVER;
  });

export const runFilterShape = {
  skill: z.string().regex(SKILL_NAME_PATTERN, "is not a skill name").optional(),
  expert: z.string().regex(TOOL_NAME_PATTERN, "is not an expert name").optional(),
  user: z.string().trim().min(1).max(200).optional(),
  outcome: z.enum(OUTCOMES).optional(),
  from: timeParam.optional(),
  to: timeParam.optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
  cursor: cursorParam.optional(),
};
export const runFilterSchema = z.object(runFilterShape);
export type RunFilter = z.output<typeof runFilterSchema>;

export const RUN_FILTER_FIXES: QueryFixes<typeof runFilterShape> = {
  skill: "Use a skill name as listed by GET /admin/api/skills.",
  expert: "Use an expert's tool name, e.g. ask_docs.",
  user: "Use a user id (user.id) or login (user.login) as runs show it, 1-200 characters.",
  outcome: `Use one of ${OUTCOMES.join(", ")}.`,
  from: "Use epoch milliseconds or an ISO 8601 date or date-time (UTC), e.g. 2026-11-23T00:00:00Z.",
  to: "Use epoch milliseconds or an ISO 8601 date or date-time (UTC); `to` is exclusive.",
  limit: "Use a whole number from 1 to 200 (default 50).",
  cursor: "Pass `next_cursor` from the previous page unchanged, or leave it out for the first page.",
};

/**
 * A run as the index lists it: the stored row, with `id` for `runId` and `user` (with the display
 * name from sign-in) for the three user columns. `cost` is at the skill's catalog prices when the
 * run ended; null when its model had no price.
 */
export type RunSummary = Omit<RunIndexRow, "runId" | "userId" | "userLogin" | "userEmail"> & {
  id: string;
  user: { id: string; login: string | null; email: string | null };
};

export interface RunIndexRecord {
  run_id: string;
  skill: string;
  expert: string;
  user_id: string;
  user_login: string | null;
  user_email: string | null;
  thread_id: string | null;
  catalog_version: number | null;
  provider: string;
  model: string;
  /** Only run-index-writer.ts writes the table, from a typed row. */
  outcome: RecordedOutcome;
  trace_id: string;
  started_at: number;
  ended_at: number;
  elapsed_ms: number;
  steps: number;
  input_tokens: number;
  output_tokens: number;
  tool_calls: number;
  tool_errors: number;
  downstream_bytes: number;
  cost: number | null;
  /** NULL for rows indexed before migrations/0005. */
  budget_exhausted: string | null;
  refused_calls: number | null;
}

/** The WHERE clause of the filters (without the cursor) and its bindings. */
export function runFilterClause(filter: Omit<RunFilter, "limit" | "cursor">): { where: string; binds: Array<string | number> } {
  const conditions: string[] = [];
  const binds: Array<string | number> = [];
  const equal = (column: string, value: string | undefined) => {
    if (value === undefined) return;
    conditions.push(`${column} = ?`);
    binds.push(value);
  };
  equal("skill", filter.skill);
  equal("expert", filter.expert);
  if (filter.user !== undefined) {
    // The id, or the login the run list shows (a login is not unique across identity providers: both match).
    conditions.push("(user_id = ? OR user_login = ?)");
    binds.push(filter.user, filter.user);
  }
  equal("outcome", filter.outcome);
  if (filter.from !== undefined) {
    conditions.push("started_at >= ?");
    binds.push(filter.from);
  }
  if (filter.to !== undefined) {
    conditions.push("started_at < ?");
    binds.push(filter.to);
  }
  return { where: conditions.length === 0 ? "" : `WHERE ${conditions.join(" AND ")}`, binds };
}

/** One page of runs, newest first, and the cursor of the next page (null on the last). */
export async function listIndexedRuns(db: D1Database, filter: RunFilter): Promise<{ runs: RunSummary[]; next_cursor: string | null }> {
  const { where, binds } = runFilterClause(filter);
  const conditions = where === "" ? [] : [where.slice("WHERE ".length)];
  if (filter.cursor) {
    conditions.push("(started_at < ? OR (started_at = ? AND run_id < ?))");
    binds.push(filter.cursor.s, filter.cursor.s, filter.cursor.id);
  }
  const clause = conditions.length === 0 ? "" : `WHERE ${conditions.join(" AND ")}`;
  const rows = await db
    .prepare(`SELECT * FROM ${D1_TABLES.runIndex} ${clause} ORDER BY started_at DESC, run_id DESC LIMIT ?`)
    .bind(...binds, filter.limit + 1)
    .all<RunIndexRecord>();
  const page = rows.results.slice(0, filter.limit);
  const last = page.at(-1);
  const more = rows.results.length > filter.limit && last !== undefined;
  return { runs: page.map(toRunSummary), next_cursor: more ? encodeCursor({ s: last.started_at, id: last.run_id }) : null };
}

export async function indexedRun(db: D1Database, runId: string): Promise<RunSummary | null> {
  const row = await db.prepare(`SELECT * FROM ${D1_TABLES.runIndex} WHERE run_id = ?`).bind(runId).first<RunIndexRecord>();
  return row ? toRunSummary(row) : null;
}

/** The most runs of one thread a run page lists. */
const THREAD_RUNS_LIMIT = 50;

/** The runs of a thread in the order they started: a paused run, the run that resumed it, follow-ups. */
export async function threadRuns(db: D1Database, threadId: string): Promise<Array<Pick<RunSummary, "id" | "outcome" | "startedAt">>> {
  const rows = await db
    .prepare(`SELECT run_id, outcome, started_at FROM ${D1_TABLES.runIndex} WHERE thread_id = ? ORDER BY started_at, run_id LIMIT ?`)
    .bind(threadId, THREAD_RUNS_LIMIT)
    .all<Pick<RunIndexRecord, "run_id" | "outcome" | "started_at">>();
  return rows.results.map((row) => ({ id: row.run_id, outcome: row.outcome, startedAt: row.started_at }));
}

function encodeCursor(cursor: Cursor): string {
  return base64Url(new TextEncoder().encode(JSON.stringify(cursor)));
}

export function toRunSummary(row: RunIndexRecord): RunSummary {
  return {
    id: row.run_id,
    skill: row.skill,
    expert: row.expert,
    user: { id: row.user_id, login: row.user_login, email: row.user_email },
    threadId: row.thread_id,
    catalogVersion: row.catalog_version,
    provider: row.provider,
    model: row.model,
    outcome: row.outcome,
    traceId: row.trace_id,
    startedAt: row.started_at,
    endedAt: row.ended_at,
    elapsedMs: row.elapsed_ms,
    steps: row.steps,
    inputTokens: row.input_tokens,
    outputTokens: row.output_tokens,
    toolCalls: row.tool_calls,
    toolErrors: row.tool_errors,
    downstreamBytes: row.downstream_bytes,
    cost: row.cost,
    budgetExhausted: row.budget_exhausted ?? null,
    refusedCalls: row.refused_calls ?? 0,
  };
}

/** How far back a run may have started to count among the recently ended (bounds the scan to the started_at index). */
const RECENT_RUN_MAX_MS = 60 * 60 * 1000;

export interface RecentlyEndedRun {
  run: RunIndexRecord;
  /** Its downstream tool calls in order, as the model named them (`server__tool`). */
  tools: Array<{ name: string; status: string }>;
}

/**
 * Runs that ended since `since`, newest end first, with their tool calls: the live page's
 * "Finished" table on a fresh load. The live feed only hears of runs while a page watches
 * (src/experts/live/live-publisher.ts); the index has every run about a second after it ends.
 */
export async function recentlyEndedRuns(db: D1Database, since: number, limit: number): Promise<RecentlyEndedRun[]> {
  const runs = await db
    .prepare(`SELECT * FROM ${D1_TABLES.runIndex} WHERE started_at >= ? AND ended_at >= ? ORDER BY ended_at DESC, run_id LIMIT ?`)
    .bind(since - RECENT_RUN_MAX_MS, since, limit)
    .all<RunIndexRecord>();
  if (runs.results.length === 0) return [];
  const ids = runs.results.map((run) => run.run_id);
  const calls = await db
    .prepare(`SELECT run_id, server_id, tool, status FROM ${D1_TABLES.runToolCalls} WHERE run_id IN (${ids.map(() => "?").join(", ")}) ORDER BY run_id, seq`)
    .bind(...ids)
    .all<{ run_id: string; server_id: string; tool: string; status: string }>();
  const byRun = new Map<string, Array<{ name: string; status: string }>>();
  for (const call of calls.results) {
    const list = byRun.get(call.run_id) ?? [];
    list.push({ name: namespacedToolName(call.server_id, call.tool), status: call.status });
    byRun.set(call.run_id, list);
  }
  return runs.results.map((run) => ({ run, tools: byRun.get(run.run_id) ?? [] }));
}
