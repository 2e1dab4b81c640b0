import { APICallError } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { setModelResolverForTests } from "../../src/experts/models/model-resolver-override";
import { uniqueSkill } from "../support/catalog-test-data";
import { scriptedModel } from "../support/workers/scripted-model";
import { admin } from "./admin-test-client";

interface ProbedModel {
  model: string;
  experts: string[];
  probe?: { ok: boolean; latencyMs: number; error?: { kind: string; message: string } };
}

const fixtures = inject("fixtureServers");
const KEY = "sk-probe-5ecr3t-4242";
const calls: Record<string, number> = {};

/** One model per configured model id: answers, refuses the key (401), or never answers. */
function modelFor(modelId: string): MockLanguageModelV4 {
  calls[modelId] = (calls[modelId] ?? 0) + 1;
  if (modelId === "answers") return scriptedModel([{ text: "ok", outputTokens: 1 }], { modelId });
  return new MockLanguageModelV4({
    modelId,
    doGenerate: async (options) => {
      if (modelId === "refuses") {
        throw new APICallError({
          message: `Incorrect API key provided: ${KEY}`,
          url: "https://api.example.com/v1/chat/completions",
          requestBodyValues: {},
          statusCode: 401,
        });
      }
      // Never answers: only the probe's own abort signal ends it.
      return new Promise((_, reject) => options.abortSignal?.addEventListener("abort", () => reject(options.abortSignal?.reason), { once: true }));
    },
  });
}

describe("GET /models?probe=1", () => {
  const skill = uniqueSkill("probe");
  beforeAll(async () => {
    setModelResolverForTests((expert) => modelFor(expert.model ?? "default"));
    const expert = (name: string, model: string) => ({ name, description: "d", provider: "openai-compatible", base_url: `${fixtures.echo}/v1`, model });
    const put = await admin("PUT", `/skills/${skill}`, {
      experts: [expert("a", "answers"), expert("a2", "answers"), expert("r", "refuses"), expert("s", "stalls")],
    });
    expect(put.status).toBeLessThan(300);
  });
  afterAll(() => setModelResolverForTests(undefined));

  it("makes one call per distinct model and reports ok with latency, a 401 as the runner words it, and a timeout", async () => {
    for (const key of Object.keys(calls)) delete calls[key];
    const answer = await admin("GET", `/models?skill=${skill}&probe=1&timeout_ms=300`);
    expect(answer.status).toBe(200);
    const models = answer.body.models as ProbedModel[];
    const of = (model: string) => models.find((entry) => entry.model === model);
    expect(of("answers")).toMatchObject({ experts: [`${skill}/a`, `${skill}/a2`], probe: { ok: true, latencyMs: expect.any(Number) } });
    expect(of("refuses")?.probe).toMatchObject({ ok: false, error: { kind: "model-auth-rejected", message: expect.stringContaining("HTTP 401") } });
    expect(of("stalls")?.probe).toMatchObject({
      ok: false,
      latencyMs: expect.any(Number),
      error: { kind: "model-probe-timed-out", message: expect.stringContaining("300 ms") },
    });
    expect(of("stalls")?.probe?.latencyMs).toBeGreaterThanOrEqual(250);
    expect(calls).toEqual({ answers: 1, refuses: 1, stalls: 1 });
    expect(JSON.stringify(answer.body)).not.toContain(KEY);
  });

  it("calls no model without probe=1, and refuses a bad probe or timeout_ms", async () => {
    for (const key of Object.keys(calls)) delete calls[key];
    const answer = await admin("GET", `/models?skill=${skill}`);
    expect(answer.status).toBe(200);
    expect((answer.body.models as ProbedModel[]).every((entry) => entry.probe === undefined)).toBe(true);
    expect(calls).toEqual({});
    expect((await admin("GET", `/models?skill=${skill}&probe=yes`)).status).toBe(400);
    expect((await admin("GET", `/models?skill=${skill}&probe=1&timeout_ms=5`)).status).toBe(400);
  });
});
