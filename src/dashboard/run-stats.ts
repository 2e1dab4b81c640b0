import { type UsageGroup, utcDay } from "../admin/usage/run-usage";
import { aggregateServerUsage, type ServerCall, type ServerUsage } from "../admin/usage/server-usage";
import { dayNumber, mergeUsage, queryUsage, readUsageRows, usageStatement } from "../admin/usage/usage-query";
import { D1_TABLES } from "../storage-keys";

const DAY_MS = 86_400_000;
/** Tool-call rows read for the server figures; past this the page says the numbers are cut rather than reading without bound. */
const MAX_ROWS = 50_000;

/** The window of the last `days` UTC days, today included. */
export function recentWindow(days: number, now = Date.now()): { from: number; to: number } {
  return { from: Date.parse(utcDay(now - (days - 1) * DAY_MS)), to: now + 1 };
}

export interface OverviewStats {
  week: UsageGroup | undefined;
  today: UsageGroup | undefined;
  /** One entry per UTC day of the week, empty days included, oldest first. */
  days: Array<{ day: string; group: UsageGroup | undefined }>;
  /** The week's groups per skill and expert, most runs first. */
  experts: UsageGroup[];
}

/**
 * The overview's figures over the last 7 UTC days, added up by D1 (usage-query.ts) in one
 * statement grouped by day, skill, expert and outcome: a few hundred rows at most instead of a
 * week of runs, merged here four ways.
 */
export async function overviewStats(db: D1Database, filter: { skill?: string } = {}, now = Date.now()): Promise<OverviewStats> {
  const week = { ...filter, ...recentWindow(7, now) };
  const rows = readUsageRows(await usageStatement(db, week, ["skill", "expert"]).all());
  const today = dayNumber(now);
  const byDay = new Map(mergeUsage(rows, ["day"]).map((group) => [group.day, group]));
  const days: OverviewStats["days"] = [];
  for (let at = week.from; at < week.to; at += DAY_MS) days.push({ day: utcDay(at), group: byDay.get(utcDay(at)) });
  return {
    week: mergeUsage(rows, [])[0],
    today: mergeUsage(
      rows.filter((row) => row.day_number === today),
      [],
    )[0],
    days,
    experts: mergeUsage(rows, ["skill", "expert"]).sort((a, b) => b.runs - a.runs),
  };
}

/** Usage of the last `days` UTC days per skill and expert, or per user. */
export function recentUsage(db: D1Database, days: number, groupBy: ["skill", "expert"] | ["user"], filter: { skill?: string } = {}): Promise<UsageGroup[]> {
  return queryUsage(db, { ...filter, ...recentWindow(days) }, groupBy);
}

/** Per downstream server: calls, errors, p50/p95 and the last error over the last hour and day. */
export async function serverUsage(db: D1Database, now = Date.now()): Promise<{ servers: ServerUsage[]; truncated: boolean }> {
  const rows = await db
    .prepare(`SELECT skill, server_id, status, elapsed_ms, error, at FROM ${D1_TABLES.runToolCalls} WHERE at >= ? AND at <= ? ORDER BY at DESC LIMIT ?`)
    .bind(now - DAY_MS, now, MAX_ROWS + 1)
    .all<ServerCall>();
  return { servers: aggregateServerUsage(rows.results.slice(0, MAX_ROWS), now), truncated: rows.results.length > MAX_ROWS };
}
