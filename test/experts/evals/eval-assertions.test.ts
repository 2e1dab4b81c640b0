import { env } from "cloudflare:test";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { replaceCatalog } from "../../../src/catalog/catalog-service";
import { setModelResolverForTests } from "../../../src/experts/models/model-resolver-override";
import { readFixtureStats, taggedBase } from "../../fixtures/fixture-stats-client";
import { scriptedModel, type ScriptedTurn, usage } from "../../support/workers/scripted-model";
import { admin } from "../../admin/admin-test-client";

const fixtures = inject("fixtureServers");
const echo = taggedBase(fixtures.echo, "eval-assertions");
const SKILL = "eval-assertions";

/**
 * Each assertion kind passing on one scripted model and failing on another, through the admin
 * route and the real session (the runner, the echo fixture server, the run record), with
 * MockLanguageModelV4 standing in for the provider.
 */
const SCRIPTS: Record<string, () => ScriptedTurn[]> = {
  direct: () => [{ text: '{"answer": "Budgets bound loops.", "confidence": 0.9}' }],
  unsure: () => [{ text: '{"answer": "Perhaps loops?"}' }],
  loopy: () => [
    { calls: [{ name: "echo__echo", input: { text: "a" } }] },
    { calls: [{ name: "echo__echo", input: { text: "b" } }] },
    { calls: [{ name: "echo__echo", input: { text: "c" } }] },
    { text: '{"answer": "Budgets bound loops, I checked thrice.", "confidence": 0.9}' },
  ],
  // The judge: reads the answer it is given to grade.
  judge: () => [
    (options) => {
      const graded = JSON.stringify(options.prompt);
      const text = graded.includes("Budgets bound loops") ? '{"score": 0.9, "reason": "names the bound"}' : '{"score": 0.2, "reason": "vague"}';
      return { content: [{ type: "text", text }], finishReason: { unified: "stop", raw: "stop" }, usage: usage(100, 10), warnings: [] };
    },
  ],
  eraser: () => [{ calls: [{ name: "echo__erase", input: { record: "r9" } }] }, { text: '{"answer": "Erased r9.", "confidence": 1}' }],
};

const expert = (name: string, evals: unknown[], extra: Record<string, unknown> = {}) => ({
  name,
  description: `${name} expert`,
  internal_tools: { echo: ["echo", "erase"] },
  provider: "openai-compatible",
  base_url: "http://127.0.0.1:9/v1",
  model: "direct",
  budget: { max_steps: 5 },
  evals,
  ...extra,
});

const answerSchema = {
  type: "object",
  properties: { answer: { type: "string" }, confidence: { type: "number", minimum: 0.5 } },
  required: ["answer", "confidence"],
};

const catalog = {
  skills: {
    [SKILL]: {
      servers: { echo: { url: `${echo}/mcp`, transport: "streamable-http" } },
      pricing: {
        "openai-compatible": {
          direct: { input_per_million: 1, output_per_million: 1 },
          loopy: { input_per_million: 1000, output_per_million: 1000 },
          judge: { input_per_million: 2, output_per_million: 2 },
        },
      },
      experts: [
        expert("plain", [
          {
            name: "every_kind",
            arguments: { query: "What bounds loops?" },
            assert: [
              { type: "contains", value: "bound loops" },
              { type: "matches", pattern: "^\\{.*budgets", flags: "i" },
              { type: "json_schema", schema: answerSchema },
              { type: "not_calls_tool", tool: "*erase" },
              { type: "max_steps", value: 2 },
              { type: "max_tokens", value: 30 },
              { type: "max_cost", value: 0.001 },
            ],
          },
          { name: "uses_echo", arguments: { query: "Check with echo." }, assert: [{ type: "calls_tool", tool: "echo__*" }] },
        ]),
        // A structured expert: json_schema checks the validated structured answer.
        expert("structured", [{ name: "confident", arguments: { query: "Sure?" }, assert: [{ type: "json_schema", schema: answerSchema }] }], {
          output_schema: { type: "object", properties: { answer: { type: "string" }, confidence: { type: "number" } }, required: ["answer"] },
        }),
        expert(
          "graded",
          [
            {
              name: "judged",
              arguments: { query: "What bounds loops?" },
              assert: [{ type: "rubric", criteria: "Says what bounds the loop.", threshold: 0.5 }],
            },
          ],
          { eval_settings: { judge: { provider: "openai-compatible", model: "judge", base_url: "http://127.0.0.1:9/v1" } } },
        ),
        expert("cleaner", [
          { name: "declined", arguments: { query: "Erase r9." }, assert: [{ type: "calls_tool", tool: "echo__erase" }] },
          { name: "approved", arguments: { query: "Erase r9." }, approve: true, assert: [{ type: "calls_tool", tool: "echo__erase" }] },
        ]),
      ],
    },
  },
};

type Result = { eval: string; passed: boolean; outcome: string; failures: Array<{ type: string; reason: string }> };
type Report = { models: Array<{ model: string; results: Result[] }> };

async function evalRun(expertName: string, models: string[]): Promise<Map<string, Map<string, Result>>> {
  const answer = await admin("POST", `/skills/${SKILL}/experts/${expertName}/evals/run`, { models: models.map((model) => `openai-compatible:${model}`) });
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  const report = answer.body as unknown as Report;
  return new Map(report.models.map((entry) => [entry.model.split(":")[1] ?? "", new Map(entry.results.map((result) => [result.eval, result]))]));
}

const failures = (result: Result | undefined) => Object.fromEntries((result?.failures ?? []).map((failure) => [failure.type, failure.reason]));

describe("eval assertions against real runs", () => {
  beforeAll(async () => {
    expect((await replaceCatalog(env, catalog, "test")).ok).toBe(true);
    setModelResolverForTests((config) => scriptedModel(SCRIPTS[config.model ?? ""]?.() ?? [{ text: `no script for ${config.model}` }]));
  });
  afterAll(() => setModelResolverForTests(undefined));

  it("each kind passes on a run that meets it and fails with its reason on one that does not", async () => {
    const byModel = await evalRun("plain", ["direct", "unsure", "loopy"]);
    expect(byModel.get("direct")?.get("every_kind")).toMatchObject({ passed: true, failures: [] });
    expect(failures(byModel.get("unsure")?.get("every_kind"))).toEqual({
      contains: 'the answer does not contain "bound loops"',
      matches: "the answer does not match /^\\{.*budgets/i",
      json_schema: expect.stringContaining("does not validate against the schema"),
      max_cost: "the cost is unknown: `openai-compatible:unsure` has no price in the skill's `pricing`",
    });
    // Four steps of 10 input and 5 output tokens, at 1000 a million each way.
    expect(failures(byModel.get("loopy")?.get("every_kind"))).toEqual({
      max_steps: "the run took 4 steps, more than 2",
      max_tokens: "the run used 60 tokens, more than 30",
      max_cost: "the run cost 0.060000, more than 0.001",
    });
    expect(byModel.get("loopy")?.get("uses_echo")?.passed).toBe(true);
    expect(failures(byModel.get("direct")?.get("uses_echo"))).toEqual({ calls_tool: "the run never called a tool matching `echo__*` (called: none)" });
  });

  it("rubric: the judge model named in eval_settings grades the answer; its tokens count toward the eval's spend", async () => {
    const answer = await admin("POST", `/skills/${SKILL}/experts/graded/evals/run`, { models: ["openai-compatible:direct", "openai-compatible:unsure"] });
    const report = answer.body as unknown as Report & { spentUsd: number };
    const byModel = new Map(report.models.map((entry) => [entry.model.split(":")[1] ?? "", entry.results[0]]));
    expect(byModel.get("direct")).toMatchObject({ passed: true, failures: [] });
    expect(failures(byModel.get("unsure"))).toEqual({ rubric: "the judge scored 0.2 (below 0.5): vague" });
    // Two judge calls of 100 input and 10 output tokens at the judge's price, plus the direct run's own cost.
    expect(report.spentUsd).toBeCloseTo(2 * ((100 * 2 + 10 * 2) / 1e6) + (10 + 5) / 1e6, 12);
  });

  it("json_schema checks an expert's structured answer", async () => {
    const byModel = await evalRun("structured", ["direct", "unsure"]);
    expect(byModel.get("direct")?.get("confident")?.passed).toBe(true);
    expect(failures(byModel.get("unsure")?.get("confident")).json_schema).toContain('Instance does not have required property "confidence"');
  });

  it("declines a call needing approval unless the eval approves it, and only then does it run", async () => {
    const erases = async () => (await readFixtureStats(echo)).calls.erase ?? 0;
    const before = await erases();
    const byModel = await evalRun("cleaner", ["eraser"]);
    const results = byModel.get("eraser");
    expect(failures(results?.get("declined"))).toEqual({ calls_tool: "the run tried `echo__erase` but it did not run (declined)" });
    expect(results?.get("approved")).toMatchObject({ passed: true, outcome: "ok" });
    expect(await erases()).toBe(before + 1);
  });
});
