import { env } from "cloudflare:test";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { replaceCatalog } from "../../src/catalog/catalog-service";
import { setModelResolverForTests } from "../../src/experts/models/model-resolver-override";
import { EVAL_USER } from "../../src/experts/evals/eval-call";
import { readFixtureStats, taggedBase } from "../fixtures/fixture-stats-client";
import { callOf, carol, sessionOf } from "../support/workers/session-helpers";
import { scriptedModel, type ScriptedTurn } from "../support/workers/scripted-model";
import { admin } from "./admin-test-client";

const fixtures = inject("fixtureServers");
const echo = taggedBase(fixtures.echo, "evals");
const SKILL = "eval-tests";

/** Three scripted "models": one answers well, one reaches for a destructive tool, one is wordy. */
const SCRIPTS: Record<string, () => ScriptedTurn[]> = {
  good: () => [{ calls: [{ name: "echo__echo", input: { text: "budget" } }] }, { text: '{"answer": "Budgets bound loops."}' }],
  rogue: () => [{ calls: [{ name: "echo__erase", input: { record: "r1" } }] }, { text: "Erased what I could; budgets bound loops." }],
  wordy: () => [{ text: `Well, ${"budgets are interesting, ".repeat(20)}and that is that.`, outputTokens: 400 }],
};

const ASSERT_ALL_KINDS = [
  { type: "contains", value: "BUDGETS BOUND" },
  { type: "matches", pattern: "bound\\s+loops", flags: "i" },
  { type: "json_schema", schema: { type: "object", properties: { answer: { type: "string" } }, required: ["answer"] } },
  { type: "calls_tool", tool: "echo__ech*" },
  { type: "not_calls_tool", tool: "echo__erase" },
  { type: "max_steps", value: 2 },
  { type: "max_tokens", value: 100 },
  { type: "max_cost", value: 0.0001 },
];

const catalog = {
  skills: {
    [SKILL]: {
      servers: { echo: { url: `${echo}/mcp`, transport: "streamable-http" } },
      // The members' limit: one run a day for the whole skill. Eval runs must not use it up.
      limits: { per_skill: { runs_per_day: 1 } },
      pricing: {
        "openai-compatible": {
          good: { input_per_million: 1, output_per_million: 2 },
          rogue: { input_per_million: 1, output_per_million: 2 },
          wordy: { input_per_million: 1, output_per_million: 10 },
        },
      },
      experts: [
        {
          name: "ask",
          description: "Answers from the echo server.",
          internal_tools: { echo: ["echo", "erase"] },
          provider: "openai-compatible",
          base_url: "http://127.0.0.1:9/v1",
          model: "good",
          budget: { max_steps: 4 },
          evals: [
            { name: "all_kinds", arguments: { query: "What bounds loops?" }, assert: ASSERT_ALL_KINDS },
            { name: "short", arguments: { query: "Quick?" }, assert: [{ type: "max_tokens", value: 100 }] },
          ],
        },
        { name: "plain", description: "No evals.", internal_tools: { echo: ["echo"] }, provider: "openai-compatible", base_url: "http://127.0.0.1:9/v1" },
      ],
    },
  },
};

type Report = {
  expert: string;
  spentUsd: number;
  stopped: string | null;
  models: Array<{
    model: string;
    passed: number;
    total: number;
    skipped: number;
    costUsd: number;
    inputTokens: number;
    outputTokens: number;
    p50Ms: number | null;
    p95Ms: number | null;
    results: Array<{
      eval: string;
      runId: string;
      outcome: string;
      passed: boolean;
      failures: Array<{ type: string; reason: string }>;
      trace: { page: string; api: string };
    }>;
  }>;
};

const run = async (body: unknown, expert = "ask") => admin("POST", `/skills/${SKILL}/experts/${expert}/evals/run`, body);
const failuresOf = (report: Report, model: string, evalName: string) =>
  report.models
    .find((entry) => entry.model === model)
    ?.results.find((result) => result.eval === evalName)
    ?.failures.map((failure) => failure.type);

describe("POST /admin/api/skills/:skill/experts/:expert/evals/run", () => {
  beforeAll(async () => {
    expect((await replaceCatalog(env, catalog, "test")).ok).toBe(true);
    // Each run resolves its model afresh, so each gets its own script from its first turn.
    setModelResolverForTests((expert) => {
      const script = SCRIPTS[expert.model ?? ""];
      if (!script) throw new Error(`no script for model ${expert.model}`);
      return scriptedModel(script());
    });
  });
  afterAll(() => setModelResolverForTests(undefined));

  it("runs every eval per model through the session and checks each assertion kind against the run record", async () => {
    const erasesBefore = (await readFixtureStats(echo)).calls.erase ?? 0;
    const answer = await run({ models: ["openai-compatible:good", "openai-compatible:rogue", "openai-compatible:wordy"] });
    expect(answer.status).toBe(200);
    const report = answer.body as unknown as Report;
    expect(report.stopped).toBeNull();
    expect(report.models.map(({ model, passed, total }) => ({ model, passed, total }))).toEqual([
      { model: "openai-compatible:good", passed: 2, total: 2 },
      { model: "openai-compatible:rogue", passed: 1, total: 2 },
      { model: "openai-compatible:wordy", passed: 0, total: 2 },
    ]);
    expect(failuresOf(report, "openai-compatible:good", "all_kinds")).toEqual([]);
    // The rogue model's erase needed approval, which an eval declines: recorded, never executed.
    expect(failuresOf(report, "openai-compatible:rogue", "all_kinds")).toEqual(["json_schema", "calls_tool", "not_calls_tool"]);
    const rogue = report.models[1]?.results[0]?.failures.find((failure) => failure.type === "not_calls_tool");
    expect(rogue?.reason).toContain("`echo__erase` (declined)");
    expect((await readFixtureStats(echo)).calls.erase ?? 0).toBe(erasesBefore);
    expect(failuresOf(report, "openai-compatible:wordy", "all_kinds")).toEqual(["contains", "matches", "json_schema", "calls_tool", "max_tokens", "max_cost"]);
    expect(failuresOf(report, "openai-compatible:wordy", "short")).toEqual(["max_tokens"]);

    const good = report.models[0];
    // Two turns of 10 input and 5 output tokens for all_kinds, the same for short.
    expect(good).toMatchObject({ inputTokens: 40, outputTokens: 20, costUsd: (40 * 1 + 20 * 2) / 1e6 });
    expect(good?.p50Ms).toBeTypeOf("number");
    expect(good?.p95Ms).toBeGreaterThanOrEqual(good?.p50Ms ?? 0);
    expect(report.spentUsd).toBeCloseTo(sumOf(report.models.map((model) => model.costUsd)), 12);

    // The trace link opens the recorded run: the eval user's session, marked with the eval's name.
    const first = good?.results[0];
    const trace = await admin("GET", (first?.trace.api ?? "").replace("http://localhost/admin/api", ""));
    expect(trace.status).toBe(200);
    expect(trace.body.run).toMatchObject({ id: first?.runId, userId: EVAL_USER.userId, model: "good", caller: { login: "eval:all_kinds" } });
    expect(first?.trace.page).toBe(`http://localhost/admin/runs/${first?.runId}`);
  });

  it("keeps eval runs out of members' runs and limits", async () => {
    await run({ evals: ["short"] });
    expect(await sessionOf(SKILL).recentRuns()).toEqual([]);
    // The skill allows members one run a day; every eval above ran, and a member's run still may.
    const member = await sessionOf(SKILL, carol).callExpert(callOf(SKILL, "ask", "What bounds loops?"));
    expect(member.outcome).toBe("ok");
    const second = await sessionOf(SKILL, carol).callExpert(callOf(SKILL, "ask", "Again?"));
    expect(second.text).toMatch(/limit/i);
  });

  it("stops starting runs once the cost budget is spent, and says so", async () => {
    const answer = await run({ models: ["openai-compatible:wordy", "openai-compatible:good"], max_cost: 0.000001, concurrency: 1 });
    expect(answer.status).toBe(200);
    const report = answer.body as unknown as Report;
    expect(report.stopped).toMatch(/budget of 0.000001 was reached.*--max-cost/);
    expect(report.models.map(({ results, skipped, total }) => ({ ran: results.length, skipped, total }))).toEqual([
      { ran: 1, skipped: 1, total: 2 },
      { ran: 0, skipped: 2, total: 2 },
    ]);
  });

  it("refuses a malformed model, an unknown eval and an expert without evals, naming the fix", async () => {
    const model = await run({ models: ["gpt-4o"] });
    expect(model.status).toBe(400);
    expect(model.problems[0]).toMatchObject({ path: "$.models[0]", fix: expect.stringContaining("google:gemini-2.5-flash-lite") });
    const unknown = await run({ evals: ["nope"] });
    expect(unknown.status).toBe(400);
    expect(unknown.problems[0]?.fix).toContain("all_kinds, short");
    const none = await run({}, "plain");
    expect(none.status).toBe(409);
    expect(none.body.fix).toContain("evals");
    const bad = await run({ concurrency: 50 });
    expect(bad.problems[0]?.path).toBe("$.concurrency");
  });
});

function sumOf(values: number[]): number {
  return values.reduce((total, value) => total + value, 0);
}
