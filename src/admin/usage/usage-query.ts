import { z } from "zod";
import { D1_TABLES } from "../../storage-keys";
import { type RunFilter, runFilterClause } from "../run-index-query";
import { roundMoney, type UsageDimension, type UsageGroup } from "./run-usage";

/** The SQL of each dimension: `day` is the UTC calendar day of the run's start, as utcDay() writes it. */
const DIMENSION_SQL: Record<UsageDimension, string> = {
  skill: "skill",
  expert: "expert",
  user: "user_id",
  day: "strftime('%Y-%m-%d', started_at / 1000, 'unixepoch')",
};

const groupRowSchema = z.object({
  skill: z.string().nullish(),
  expert: z.string().nullish(),
  user_id: z.string().nullish(),
  user_login: z.string().nullish(),
  user_email: z.string().nullish(),
  day: z.string().nullish(),
  runs: z.number(),
  outcomes: z.string(),
  input_tokens: z.number(),
  output_tokens: z.number(),
  tool_calls: z.number(),
  downstream_bytes: z.number(),
  p50: z.number().nullable(),
  p95: z.number().nullable(),
  cost: z.number().nullable(),
  priced_runs: z.number(),
});
const outcomesSchema = z.record(z.string(), z.number());

/**
 * Runs of the index added up per combination of `groupBy`, in SQL: D1 returns one row per group
 * instead of every run, which is what keeps the overview fast with many runs. Gives what
 * `aggregateUsage` (run-usage.ts) gives over the same runs: nearest-rank p50/p95 (window
 * functions rank each group's latencies), the login and email of a user's first run, outcomes
 * counted per group, groups in the order of their first run.
 */
export function usageStatement(db: D1Database, filter: Omit<RunFilter, "limit" | "cursor">, groupBy: readonly UsageDimension[]): D1PreparedStatement {
  const { where, binds } = runFilterClause(filter);
  const keys = groupBy.map((dimension) => `${DIMENSION_SQL[dimension]} AS ${keyName(dimension)}`);
  const keyNames = groupBy.map(keyName);
  const partition = keyNames.length === 0 ? "" : `PARTITION BY ${keyNames.join(", ")}`;
  const groupClause = keyNames.length === 0 ? "" : `GROUP BY ${keyNames.join(", ")}`;
  const join = keyNames.length === 0 ? "ON 1" : `USING (${keyNames.join(", ")})`;
  const user = groupBy.includes("user")
    ? ", MAX(CASE WHEN first_run = 1 THEN user_login END) AS user_login, MAX(CASE WHEN first_run = 1 THEN user_email END) AS user_email"
    : "";
  const sql = `
    WITH runs AS (
      SELECT ${[...keys, "started_at", "run_id", "outcome", "input_tokens", "output_tokens", "tool_calls", "downstream_bytes", "elapsed_ms", "cost", "user_login", "user_email"].join(", ")}
      FROM ${D1_TABLES.runIndex} ${where}
    ),
    ranked AS (
      SELECT *,
        ROW_NUMBER() OVER (${partition} ORDER BY elapsed_ms) AS latency_rank,
        COUNT(*) OVER (${partition}) AS group_runs,
        ROW_NUMBER() OVER (${partition} ORDER BY started_at, run_id) AS first_run
      FROM runs
    ),
    totals AS (
      SELECT ${[...keyNames, ""].join(", ")}
        COUNT(*) AS runs, SUM(input_tokens) AS input_tokens, SUM(output_tokens) AS output_tokens,
        SUM(tool_calls) AS tool_calls, SUM(downstream_bytes) AS downstream_bytes,
        MAX(CASE WHEN latency_rank = (50 * group_runs + 99) / 100 THEN elapsed_ms END) AS p50,
        MAX(CASE WHEN latency_rank = (95 * group_runs + 99) / 100 THEN elapsed_ms END) AS p95,
        SUM(cost) AS cost, COUNT(cost) AS priced_runs, MIN(started_at) AS first_started${user}
      FROM ranked ${groupClause}
    ),
    outcomes AS (
      SELECT ${[...keyNames, ""].join(", ")} json_group_object(outcome, n) AS outcomes
      FROM (SELECT ${[...keyNames, ""].join(", ")} outcome, COUNT(*) AS n FROM runs ${groupClause === "" ? "GROUP BY outcome" : `${groupClause}, outcome`})
      ${groupClause}
    )
    SELECT * FROM totals JOIN outcomes ${join} WHERE totals.runs > 0 ORDER BY first_started${keyNames.map((key) => `, ${key}`).join("")}`;
  return db.prepare(sql).bind(...binds);
}

/** Reads the rows of `usageStatement` (run alone, or in a D1 batch with others). */
export function usageGroups(result: D1Result, groupBy: readonly UsageDimension[]): UsageGroup[] {
  return result.results.map((raw) => {
    const row = groupRowSchema.parse(raw);
    const outcomes = outcomesSchema.parse(JSON.parse(row.outcomes));
    return {
      ...(groupBy.includes("skill") ? { skill: row.skill ?? "" } : {}),
      ...(groupBy.includes("expert") ? { expert: row.expert ?? "" } : {}),
      ...(groupBy.includes("user") ? { user: { id: row.user_id ?? "", login: row.user_login ?? null, email: row.user_email ?? null } } : {}),
      ...(groupBy.includes("day") ? { day: row.day ?? "" } : {}),
      runs: row.runs,
      outcomes,
      inputTokens: row.input_tokens,
      outputTokens: row.output_tokens,
      toolCalls: row.tool_calls,
      downstreamBytes: row.downstream_bytes,
      latencyMs: { p50: row.p50, p95: row.p95 },
      cost: row.priced_runs === 0 || row.cost === null ? null : roundMoney(row.cost),
      pricedRuns: row.priced_runs,
      unpricedRuns: row.runs - row.priced_runs,
    };
  });
}

/** The usage groups of the runs `filter` selects. */
export async function queryUsage(db: D1Database, filter: Omit<RunFilter, "limit" | "cursor">, groupBy: readonly UsageDimension[]): Promise<UsageGroup[]> {
  return usageGroups(await usageStatement(db, filter, groupBy).all(), groupBy);
}

function keyName(dimension: UsageDimension): string {
  return dimension === "user" ? "user_id" : dimension;
}
