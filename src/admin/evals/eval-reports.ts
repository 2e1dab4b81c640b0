import { z } from "zod";
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

const storedModelSchema: z.ZodType<StoredModelResult> = z.object({
  model: z.string(),
  passed: z.number(),
  total: z.number(),
  tokens: z.number(),
  costUsd: z.number(),
  unpriced: z.boolean(),
  p50Ms: z.number().nullable(),
  p95Ms: z.number().nullable(),
  ranAt: z.number(),
  failures: z.array(z.object({ eval: z.string(), reasons: z.array(z.string()), runId: z.string().nullable() })),
});
const storedReportSchema = z.object({ models: z.record(z.string(), storedModelSchema) });

const TTL_SECONDS = 90 * 86_400;
/** Versions shown in an expert's history, newest first. */
const HISTORY_LIMIT = 20;

/** Keeps an eval command's results, one key per model (the latest run of that model on that version wins). */
export async function saveEvalReport(env: Env, report: ExpertEvalReport, now = Date.now()): Promise<void> {
  await Promise.all(
    report.models.map((model) =>
      env.CACHE.put(evalReportKey(report.skill, report.expert, report.catalogVersion, model.model), JSON.stringify(stored(model, now)), {
        expirationTtl: TTL_SECONDS,
      }),
    ),
  );
}

/** Most keys one expert's page reads: the models of its newest versions. */
const MAX_REPORT_KEYS = 200;

/** The expert's reports, newest catalog version first, each with the latest result per model. */
export async function listEvalReports(env: Env, skill: string, expert: string): Promise<StoredEvalReport[]> {
  const prefix = evalReportPrefix(skill, expert);
  const listed = await env.CACHE.list({ prefix });
  const byVersion = new Map<number, string[]>();
  for (const { name } of listed.keys) {
    const version = Number(name.slice(prefix.length, prefix.length + 8));
    if (!Number.isSafeInteger(version)) continue;
    byVersion.set(version, [...(byVersion.get(version) ?? []), name]);
  }
  const versions = [...byVersion.keys()].sort((a, b) => b - a).slice(0, HISTORY_LIMIT);
  const keys = versions.flatMap((version) => byVersion.get(version) ?? []).slice(0, MAX_REPORT_KEYS);
  const values = await Promise.all(keys.map(async (key) => ({ key, value: parseQuietly(await env.CACHE.get(key)) })));
  const reports = new Map<number, StoredEvalReport>();
  for (const { key, value } of values) {
    const version = Number(key.slice(prefix.length, prefix.length + 8));
    const report = reports.get(version) ?? { skill, expert, catalogVersion: version, models: {} };
    reports.set(version, report);
    // A key with a model part holds that model's result; one without, every model of the version (the layout before).
    const whole = storedReportSchema.safeParse(value);
    const one = whole.success ? undefined : storedModelSchema.safeParse(value);
    if (whole.success) Object.assign(report.models, whole.data.models);
    else if (one?.success) report.models[one.data.model] = one.data;
  }
  return versions.flatMap((version) => {
    const report = reports.get(version);
    return report && Object.keys(report.models).length > 0 ? [report] : [];
  });
}

function parseQuietly(text: string | null): unknown {
  if (text === null) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
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
