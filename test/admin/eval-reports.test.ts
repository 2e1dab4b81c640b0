import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { listEvalReports, saveEvalReport, type StoredModelResult } from "../../src/admin/evals/eval-reports";
import type { ExpertEvalReport, ModelReport } from "../../src/admin/evals/eval-runner";
import { evalReportPrefix } from "../../src/storage-keys";

const modelReport = (model: string, passed: number): ModelReport =>
  ({
    model,
    passed,
    total: 2,
    inputTokens: 10,
    outputTokens: 5,
    costUsd: 0,
    unpriced: true,
    p50Ms: 12,
    p95Ms: 20,
    results: [],
  }) as unknown as ModelReport;

const report = (skill: string, version: number, models: ModelReport[]): ExpertEvalReport =>
  ({ skill, expert: "ask", catalogVersion: version, models }) as unknown as ExpertEvalReport;

describe("eval reports in KV", () => {
  it("keeps both of two eval commands that ran different models at once (one key per model: nothing to merge, nothing lost)", async () => {
    const skill = `reports-${crypto.randomUUID().slice(0, 8)}`;
    await Promise.all([
      saveEvalReport(env, report(skill, 3, [modelReport("openai-compatible:a", 2)])),
      saveEvalReport(env, report(skill, 3, [modelReport("openai-compatible:b", 1)])),
    ]);
    const [latest] = await listEvalReports(env, skill, "ask");
    expect(Object.keys(latest?.models ?? {}).sort()).toEqual(["openai-compatible:a", "openai-compatible:b"]);
    expect(latest?.models["openai-compatible:b"]?.passed).toBe(1);
  });

  it("reads a version stored in one document (the layout before) beside per-model keys, newest version first, and skips what does not parse", async () => {
    const skill = `reports-${crypto.randomUUID().slice(0, 8)}`;
    const old: StoredModelResult = {
      model: "google:gemini-2.5-flash",
      passed: 1,
      total: 1,
      tokens: 3,
      costUsd: 0.01,
      unpriced: false,
      p50Ms: 5,
      p95Ms: 9,
      ranAt: 1,
      failures: [],
    };
    const prefix = evalReportPrefix(skill, "ask");
    await env.CACHE.put(`${prefix}00000001`, JSON.stringify({ skill, expert: "ask", catalogVersion: 1, models: { [old.model]: old } }));
    await env.CACHE.put(`${prefix}00000002:junk`, "{not json");
    await saveEvalReport(env, report(skill, 2, [modelReport("openai-compatible:a", 2)]));
    const reports = await listEvalReports(env, skill, "ask");
    expect(reports.map((r) => [r.catalogVersion, Object.keys(r.models)])).toEqual([
      [2, ["openai-compatible:a"]],
      [1, ["google:gemini-2.5-flash"]],
    ]);
  });
});
