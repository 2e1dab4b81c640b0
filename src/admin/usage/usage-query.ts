import { z } from "zod";
import { RECORDED_OUTCOMES } from "../../experts/core/run-types";
import { D1_TABLES } from "../../storage-keys";
import { type RunFilter, runFilterClause } from "../run-index-query";
import { latencySummary } from "./percentiles";
import { roundMoney, type UsageDimension, type UsageGroup, utcDay } from "./run-usage";

const DAY_MS = 86_400_000;

/** The columns each dimension is grouped by (a user by id, with the login and email runs carried). */
const DIMENSION_COLUMNS: Record<Exclude<UsageDimension, "day">, readonly string[]> = {
  skill: ["skill"],
  expert: ["expert"],
  user: ["user_id", "user_login", "user_email"],
};

const usageRowSchema = z.object({
  day_number: z.number().int(),
  skill: z.string().optional(),
  expert: z.string().optional(),
  user_id: z.string().optional(),
  user_login: z.string().nullish(),
  user_email: z.string().nullish(),
  outcome: z.enum(RECORDED_OUTCOMES),
  runs: z.number().int(),
  input_tokens: z.number(),
  output_tokens: z.number(),
  tool_calls: z.number(),
  downstream_bytes: z.number(),
  cost: z.number().nullable(),
  priced_runs: z.number().int(),
  first_started: z.number(),
  latencies: z.string().regex(/^\d+(,\d+)*$/),
});
/** Runs of one UTC day, one outcome and one combination of the grouped columns, added up by D1. */
export type UsageRow = z.infer<typeof usageRowSchema>;

/**
 * One statement that has D1 add the run index up per UTC day, outcome and the columns of
 * `dimensions`: a few rows per day instead of every run, in one scan. Latencies come as one
 * comma-joined list per row (group_concat), so percentiles stay exact nearest-rank values when
 * rows are merged (mergeUsage); a row's list holds at most one day of one group's runs.
 */
export function usageStatement(db: D1Database, filter: Omit<RunFilter, "limit" | "cursor">, dimensions: readonly UsageDimension[]): D1PreparedStatement {
  const { where, binds } = runFilterClause(filter);
  const columns = dimensions.flatMap((dimension) => (dimension === "day" ? [] : DIMENSION_COLUMNS[dimension]));
  const keys = [`started_at / ${DAY_MS}`, ...columns, "outcome"];
  const sql = `SELECT started_at / ${DAY_MS} AS day_number, ${[...columns, "outcome"].join(", ")},
      COUNT(*) AS runs, SUM(input_tokens) AS input_tokens, SUM(output_tokens) AS output_tokens, SUM(tool_calls) AS tool_calls,
      SUM(downstream_bytes) AS downstream_bytes, SUM(cost) AS cost, COUNT(cost) AS priced_runs, MIN(started_at) AS first_started,
      group_concat(elapsed_ms) AS latencies
    FROM ${D1_TABLES.runIndex} ${where} GROUP BY ${keys.join(", ")}`;
  return db.prepare(sql).bind(...binds);
}

export function readUsageRows(result: D1Result): UsageRow[] {
  return result.results.map((row) => usageRowSchema.parse(row));
}

/**
 * Adds rows up per combination of `groupBy` (dimensions the statement grouped by): runs, outcomes,
 * tokens, tool calls, bytes, cost over priced runs, nearest-rank p50/p95 over every run's latency,
 * a user's login and email from their first run; groups in the order of their first run.
 */
export function mergeUsage(rows: readonly UsageRow[], groupBy: readonly UsageDimension[]): UsageGroup[] {
  const groups = new Map<string, { group: UsageGroup; latencies: number[]; cost: number }>();
  for (const row of [...rows].sort((a, b) => a.first_started - b.first_started)) {
    const day = utcDay(row.day_number * DAY_MS);
    const key = JSON.stringify(groupBy.map((dimension) => (dimension === "day" ? day : dimension === "user" ? row.user_id : row[dimension])));
    let entry = groups.get(key);
    if (!entry) {
      const group: UsageGroup = {
        ...(groupBy.includes("skill") ? { skill: row.skill ?? "" } : {}),
        ...(groupBy.includes("expert") ? { expert: row.expert ?? "" } : {}),
        ...(groupBy.includes("user") ? { user: { id: row.user_id ?? "", login: row.user_login ?? null, email: row.user_email ?? null } } : {}),
        ...(groupBy.includes("day") ? { day } : {}),
        runs: 0,
        outcomes: {},
        inputTokens: 0,
        outputTokens: 0,
        toolCalls: 0,
        downstreamBytes: 0,
        latencyMs: { p50: null, p95: null },
        cost: null,
        pricedRuns: 0,
        unpricedRuns: 0,
      };
      entry = { group, latencies: [], cost: 0 };
      groups.set(key, entry);
    }
    const { group } = entry;
    group.runs += row.runs;
    group.outcomes[row.outcome] = (group.outcomes[row.outcome] ?? 0) + row.runs;
    group.inputTokens += row.input_tokens;
    group.outputTokens += row.output_tokens;
    group.toolCalls += row.tool_calls;
    group.downstreamBytes += row.downstream_bytes;
    group.pricedRuns += row.priced_runs;
    group.unpricedRuns += row.runs - row.priced_runs;
    entry.cost += row.cost ?? 0;
    for (const latency of row.latencies.split(",")) entry.latencies.push(Number(latency));
  }
  return [...groups.values()].map(({ group, latencies, cost }) => ({
    ...group,
    latencyMs: latencySummary(latencies),
    cost: group.pricedRuns === 0 ? null : roundMoney(cost),
  }));
}

/** The usage groups of the runs `filter` selects. */
export async function queryUsage(db: D1Database, filter: Omit<RunFilter, "limit" | "cursor">, groupBy: readonly UsageDimension[]): Promise<UsageGroup[]> {
  return mergeUsage(readUsageRows(await usageStatement(db, filter, groupBy).all()), groupBy);
}

/** The UTC day number (days since the epoch) of a time, as usage rows carry it. */
export function dayNumber(ms: number): number {
  return Math.floor(ms / DAY_MS);
}
