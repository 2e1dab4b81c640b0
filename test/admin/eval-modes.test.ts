import { env } from "cloudflare:test";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { replaceCatalog } from "../../src/catalog/catalog-service";
import { setModelResolverForTests } from "../../src/experts/models/model-resolver-override";
import { taggedBase } from "../fixtures/fixture-stats-client";
import { scriptedModel, toResult } from "../support/workers/scripted-model";
import { admin } from "./admin-test-client";

const fixtures = inject("fixtureServers");
const echo = taggedBase(fixtures.echo, "eval-modes");
const SKILL = "eval-modes";

const expert = (fields: Record<string, unknown> = {}) => ({
  name: "both",
  description: "Echoes through the fixture.",
  internal_tools: { echo: ["echo"] },
  provider: "openai-compatible",
  base_url: "http://127.0.0.1:9/v1",
  model: "dual",
  budget: { max_steps: 4 },
  evals: [{ name: "echoes", arguments: { query: "say pong" }, assert: [{ type: "contains", value: "pong" }] }],
  ...fields,
});

describe("evals compare the tool loop with code mode", () => {
  beforeAll(async () => {
    const catalog = {
      skills: {
        [SKILL]: { servers: { echo: { url: `${echo}/mcp`, transport: "streamable-http" } }, experts: [expert(), expert({ name: "asks", ask_back: true })] },
      },
    };
    expect((await replaceCatalog(env, catalog, "test")).ok).toBe(true);
    // One model that works in either mode: a script when offered run_script, else a tool call; then it answers with what came back.
    setModelResolverForTests(() =>
      scriptedModel([
        (options) => {
          const offered = (options.tools ?? []).map((tool) => tool.name);
          return offered.includes("run_script")
            ? toResult({ calls: [{ name: "run_script", input: { code: 'return await tools.echo__echo({ text: "pong" });' } }] })
            : toResult({ calls: [{ name: "echo__echo", input: { text: "pong" } }] });
        },
        (options) => {
          const last = JSON.stringify(options.prompt.at(-1));
          return toResult({ text: last.includes("pong") ? "it said pong" : "nothing came back" });
        },
      ]),
    );
  });
  afterAll(() => setModelResolverForTests(undefined));

  it("runs each model in each mode asked and reports them side by side", async () => {
    const answer = await admin("POST", `/skills/${SKILL}/experts/both/evals/run`, { modes: ["synthesize", "code"] });
    expect(answer.status).toBe(200);
    const models = answer.body.models as Array<{ model: string; passed: number; total: number; results: Array<{ steps: number }> }>;
    expect(models.map((entry) => [entry.model, entry.passed, entry.total])).toEqual([
      ["openai-compatible:dual (synthesize)", 1, 1],
      ["openai-compatible:dual (code)", 1, 1],
    ]);
  });

  it("refuses a mode the expert cannot run in, by its index", async () => {
    const answer = await admin("POST", `/skills/${SKILL}/experts/asks/evals/run`, { modes: ["synthesize", "code"] });
    expect(answer.status).toBe(400);
    expect(answer.problems).toEqual([expect.objectContaining({ path: "$.modes[1]", message: expect.stringContaining("`ask_back`") })]);
  });
});
