import { runFilterClause } from "../admin/run-index-query";
import { aggregateUsage, type UsageGroup, type UsageRun, utcDay } from "../admin/usage/run-usage";
import { aggregateServerUsage, type ServerCall, type ServerUsage } from "../admin/usage/server-usage";
import { D1_TABLES } from "../storage-keys";

const DAY_MS = 86_400_000;
/** Rows read for one page; past this the page says the numbers are cut rather than reading without bound. */
const MAX_ROWS = 50_000;

export interface RecentRuns {
  runs: UsageRun[];
  truncated: boolean;
  from: number;
  now: number;
}

/** The run index's rows of the last `days` UTC days (today included), the columns usage adds up. */
export async function recentRuns(db: D1Database, days: number, filter: { skill?: string } = {}, now = Date.now()): Promise<RecentRuns> {
  const from = Date.parse(utcDay(now - (days - 1) * DAY_MS));
  const { where, binds } = runFilterClause({ ...filter, from, to: now + 1 });
  const rows = await db
    .prepare(
      `SELECT skill, expert, user_id, user_login, user_email, started_at, outcome, input_tokens, output_tokens, tool_calls,
              downstream_bytes, elapsed_ms, cost
       FROM ${D1_TABLES.runIndex} ${where} ORDER BY started_at LIMIT ?`,
    )
    .bind(...binds, MAX_ROWS + 1)
    .all<UsageRun>();
  return { runs: rows.results.slice(0, MAX_ROWS), truncated: rows.results.length > MAX_ROWS, from, now };
}

export function totals(runs: readonly UsageRun[]): UsageGroup | undefined {
  return aggregateUsage(runs, [])[0];
}

export function today(recent: RecentRuns): UsageRun[] {
  const start = Date.parse(utcDay(recent.now));
  return recent.runs.filter((run) => run.started_at >= start);
}

/** One group per UTC day of the window, empty days included, oldest first. */
export function perDay(recent: RecentRuns): Array<{ day: string; group: UsageGroup | undefined }> {
  const groups = new Map(aggregateUsage(recent.runs, ["day"]).map((group) => [group.day, group]));
  const days: Array<{ day: string; group: UsageGroup | undefined }> = [];
  for (let at = recent.from; at <= recent.now; at += DAY_MS) days.push({ day: utcDay(at), group: groups.get(utcDay(at)) });
  return days;
}

/** Per downstream server: calls, errors, p50/p95 and the last error over the last hour and day. */
export async function serverUsage(db: D1Database, now = Date.now()): Promise<{ servers: ServerUsage[]; truncated: boolean }> {
  const rows = await db
    .prepare(`SELECT skill, server_id, status, elapsed_ms, error, at FROM ${D1_TABLES.runToolCalls} WHERE at >= ? AND at <= ? ORDER BY at DESC LIMIT ?`)
    .bind(now - DAY_MS, now, MAX_ROWS + 1)
    .all<ServerCall>();
  return { servers: aggregateServerUsage(rows.results.slice(0, MAX_ROWS), now), truncated: rows.results.length > MAX_ROWS };
}
