import { env } from "cloudflare:test";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { replaceCatalog } from "../../src/catalog/catalog-service";
import { setModelResolverForTests } from "../../src/experts/models/model-resolver-override";
import { taggedBase } from "../fixtures/fixture-stats-client";
import { scriptedModel, type ScriptedTurn, usage } from "../support/workers/scripted-model";
import { admin } from "./admin-test-client";

const fixtures = inject("fixtureServers");
const echo = taggedBase(fixtures.echo, "eval-gate");
const SKILL = "eval-gate";

const SCRIPTS: Record<string, () => ScriptedTurn[]> = {
  // Reads its system prompt, so an eval shows which config (candidate or live) the runner got.
  good: () => [
    (options) => {
      const vague = JSON.stringify(options.prompt.filter((message) => message.role === "system")).includes("Be vague");
      return {
        content: [{ type: "text", text: vague ? "It depends." : "Budgets bound loops." }],
        finishReason: { unified: "stop", raw: "stop" },
        usage: usage(10, 5),
        warnings: [],
      };
    },
  ],
  vague: () => [{ text: "It depends." }],
};

const expert = (model: string, extra: Record<string, unknown> = {}) => ({
  name: "ask",
  description: "Answers questions.",
  internal_tools: { echo: ["echo"] },
  provider: "openai-compatible",
  base_url: "http://127.0.0.1:9/v1",
  model,
  evals: [{ name: "bounds", arguments: { query: "What bounds loops?" }, assert: [{ type: "contains", value: "bound loops" }] }],
  ...extra,
});
const other = (description: string) => ({ name: "other", description, provider: "openai-compatible", base_url: "http://127.0.0.1:9/v1", model: "vague" });
const skill = (...experts: unknown[]) => ({ servers: { echo: { url: `${echo}/mcp`, transport: "streamable-http" } }, experts });

describe("catalog writes gated on evals", () => {
  /** The models runs resolved, in order: which evals ran, and on what. */
  const resolved: string[] = [];
  beforeAll(async () => {
    expect((await replaceCatalog(env, { skills: { [SKILL]: skill(expert("good"), other("first")) } }, "test")).ok).toBe(true);
    setModelResolverForTests((config) => {
      resolved.push(config.model ?? "");
      return scriptedModel(SCRIPTS[config.model ?? ""]?.() ?? [{ text: "no script" }]);
    });
  });
  afterAll(() => setModelResolverForTests(undefined));
  const version = async () => (await admin("GET", `/skills/${SKILL}`)).body.version;

  it("refuses a skill whose changed expert fails its evals on the candidate, naming the eval by path; nothing is saved", async () => {
    const before = await version();
    // Only the prompt changes: the eval must run the candidate's config, not the live one.
    const refused = await admin("PUT", `/skills/${SKILL}?require_evals=1`, skill(expert("good", { system_prompt: "Be vague." }), other("first")));
    expect(refused.status).toBe(409);
    expect(refused.body.error).toContain(`Skill "${SKILL}" was not saved`);
    expect(refused.problems).toEqual([
      {
        path: `$.skills.${SKILL}.experts[0].evals[0]`,
        message: expect.stringMatching(
          /eval `bounds` of expert `ask` fails: the answer does not contain "bound loops" \(trace http:\/\/localhost\/admin\/runs\/[0-9a-f-]{36}\)/,
        ),
        fix: expect.stringContaining("until the eval passes"),
      },
    ]);
    expect(await version()).toBe(before);

    const whole = await admin("PUT", "/catalog?require_evals=1", { skills: { [SKILL]: skill(expert("vague"), other("first")) } });
    expect(whole.status).toBe(409);
    expect(await version()).toBe(before);
  });

  it("saves when the changed experts pass, and runs no eval for an unchanged expert", async () => {
    const before = Number(await version());
    const passing = await admin("PUT", `/skills/${SKILL}?require_evals=1`, skill(expert("good", { description: "Answers questions well." }), other("first")));
    expect(passing.status).toBe(200);
    expect(await version()).toBe(before + 1);
    const count = resolved.length;
    const unrelated = await admin(
      "PUT",
      `/skills/${SKILL}?require_evals=1`,
      skill(expert("good", { description: "Answers questions well." }), other("second")),
    );
    expect(unrelated.status).toBe(200);
    expect(resolved.length).toBe(count);
  });

  it("gates without the flag when the expert sets eval_settings.gate, and not at all otherwise", async () => {
    const ungated = await admin("PUT", `/skills/${SKILL}`, skill(expert("vague"), other("first")));
    expect(ungated.status).toBe(200);
    const gated = await admin("PUT", `/skills/${SKILL}`, skill(expert("vague", { eval_settings: { gate: true }, description: "Gated." }), other("first")));
    expect(gated.status).toBe(409);
    expect(gated.problems[0]?.path).toBe(`$.skills.${SKILL}.experts[0].evals[0]`);
  });
});
