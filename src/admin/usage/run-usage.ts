import { latencySummary } from "./percentiles";

export const USAGE_DIMENSIONS = ["skill", "expert", "user", "day"] as const;
export type UsageDimension = (typeof USAGE_DIMENSIONS)[number];

/** The run_index columns usage adds up. */
export interface UsageRun {
  skill: string;
  expert: string;
  user_id: string;
  user_login: string | null;
  user_email: string | null;
  started_at: number;
  outcome: string;
  input_tokens: number;
  output_tokens: number;
  tool_calls: number;
  downstream_bytes: number;
  elapsed_ms: number;
  cost: number | null;
}

export interface UsageGroup {
  skill?: string;
  expert?: string;
  user?: { id: string; login: string | null; email: string | null };
  /** UTC day, YYYY-MM-DD. */
  day?: string;
  runs: number;
  outcomes: Record<string, number>;
  inputTokens: number;
  outputTokens: number;
  toolCalls: number;
  downstreamBytes: number;
  latencyMs: { p50: number | null; p95: number | null };
  /** Sum over the runs whose model the catalog priced; null when none was. */
  cost: number | null;
  pricedRuns: number;
  unpricedRuns: number;
}

/** UTC calendar day of an epoch-millisecond time. */
export function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** Adds runs up per combination of the chosen dimensions, in first-seen order of the runs given. */
export function aggregateUsage(runs: readonly UsageRun[], groupBy: readonly UsageDimension[]): UsageGroup[] {
  const groups = new Map<string, { group: UsageGroup; latencies: number[]; costs: number[] }>();
  for (const run of runs) {
    const keyParts = groupBy.map((dimension) => (dimension === "user" ? run.user_id : dimension === "day" ? utcDay(run.started_at) : run[dimension]));
    const key = JSON.stringify(keyParts);
    let entry = groups.get(key);
    if (!entry) {
      const group: UsageGroup = {
        ...(groupBy.includes("skill") ? { skill: run.skill } : {}),
        ...(groupBy.includes("expert") ? { expert: run.expert } : {}),
        ...(groupBy.includes("user") ? { user: { id: run.user_id, login: run.user_login, email: run.user_email } } : {}),
        ...(groupBy.includes("day") ? { day: utcDay(run.started_at) } : {}),
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
      entry = { group, latencies: [], costs: [] };
      groups.set(key, entry);
    }
    const { group } = entry;
    group.runs++;
    group.outcomes[run.outcome] = (group.outcomes[run.outcome] ?? 0) + 1;
    group.inputTokens += run.input_tokens;
    group.outputTokens += run.output_tokens;
    group.toolCalls += run.tool_calls;
    group.downstreamBytes += run.downstream_bytes;
    entry.latencies.push(run.elapsed_ms);
    if (run.cost === null) group.unpricedRuns++;
    else {
      group.pricedRuns++;
      entry.costs.push(run.cost);
    }
  }
  return [...groups.values()].map(({ group, latencies, costs }) => ({
    ...group,
    latencyMs: latencySummary(latencies),
    cost: costs.length === 0 ? null : roundMoney(costs.reduce((sum, cost) => sum + cost, 0)),
  }));
}

/** Cost sums of many small floats: rounded to 1e-9 so sums read as the arithmetic says. */
export function roundMoney(value: number): number {
  return Math.round(value * 1e9) / 1e9;
}
