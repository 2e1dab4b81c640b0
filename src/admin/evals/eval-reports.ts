import { evalReportKey, evalReportPrefix } from "../../storage-keys";
import type { ExpertEvalReport, ModelReport } from "./eval-runner";

/** What is kept of one model's results: the figures, and each failing eval's reasons (no answers). */
export interface StoredModelResult {
  model: string;
  passed: number;
  total: number;
  tokens: number;
  costUsd: number;
  unpriced: boolean;
  p50Ms: number | null;
  p95Ms: number | null;
  ranAt: number;
  failures: Array<{ eval: string; reasons: string[]; runId: string | null }>;
}

export interface StoredEvalReport {
  skill: string;
  expert: string;
  catalogVersion: number;
  /** Latest per model, by `provider:model`. */
  models: Record<string, StoredModelResult>;
}

const TTL_SECONDS = 90 * 86_400;
/** Versions shown in an expert's history, newest first. */
const HISTORY_LIMIT = 20;

/** Merges an eval command's results into the expert's report for that catalog version. */
export async function saveEvalReport(env: Env, report: ExpertEvalReport, now = Date.now()): Promise<void> {
  const key = evalReportKey(report.skill, report.expert, report.catalogVersion);
  const existing = await env.CACHE.get<StoredEvalReport>(key, "json");
  const models = { ...(existing?.models ?? {}) };
  for (const model of report.models) models[model.model] = stored(model, now);
  const next: StoredEvalReport = { skill: report.skill, expert: report.expert, catalogVersion: report.catalogVersion, models };
  await env.CACHE.put(key, JSON.stringify(next), { expirationTtl: TTL_SECONDS });
}

/** The expert's reports, newest catalog version first. */
export async function listEvalReports(env: Env, skill: string, expert: string): Promise<StoredEvalReport[]> {
  const listed = await env.CACHE.list({ prefix: evalReportPrefix(skill, expert) });
  const keys = listed.keys
    .map((entry) => entry.name)
    .sort()
    .reverse()
    .slice(0, HISTORY_LIMIT);
  const reports = await Promise.all(keys.map((key) => env.CACHE.get<StoredEvalReport>(key, "json")));
  return reports.filter((report): report is StoredEvalReport => report !== null);
}

function stored(model: ModelReport, ranAt: number): StoredModelResult {
  return {
    model: model.model,
    passed: model.passed,
    total: model.total,
    tokens: model.inputTokens + model.outputTokens,
    costUsd: model.costUsd,
    unpriced: model.unpriced,
    p50Ms: model.p50Ms,
    p95Ms: model.p95Ms,
    ranAt,
    failures: model.results
      .filter((result) => !result.passed)
      .slice(0, 20)
      .map((result) => ({ eval: result.eval, reasons: result.failures.map((failure) => failure.reason.slice(0, 300)), runId: result.runId })),
  };
}
