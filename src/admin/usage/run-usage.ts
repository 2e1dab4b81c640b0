import type { RecordedOutcome } from "../../experts/core/run-types";

export const USAGE_DIMENSIONS = ["skill", "expert", "user", "day"] as const;
export type UsageDimension = (typeof USAGE_DIMENSIONS)[number];

export interface UsageGroup {
  skill?: string;
  expert?: string;
  user?: { id: string; login: string | null; email: string | null };
  /** UTC day, YYYY-MM-DD. */
  day?: string;
  runs: number;
  outcomes: Partial<Record<RecordedOutcome, number>>;
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

/** Cost sums of many small floats: rounded to 1e-9 so sums read as the arithmetic says. */
export function roundMoney(value: number): number {
  return Math.round(value * 1e9) / 1e9;
}
