import { env } from "cloudflare:test";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { replaceCatalog } from "../../src/catalog/catalog-service";
import { saveSkill } from "../../src/catalog/catalog-store";
import { parseCatalog } from "../../src/catalog/parse-catalog";
import { setModelResolverForTests } from "../../src/experts/models/model-resolver-override";
import { taggedBase } from "../fixtures/fixture-stats-client";
import { scriptedModel, type ScriptedTurn, usage } from "../support/workers/scripted-model";
import { csrfIn, dashboardFetch, form, signInAs } from "../dashboard/dashboard-test-client";
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

  it("gates a restore: the API's with ?require_evals=1, the dashboard's when the restored expert sets eval_settings.gate", async () => {
    // Stored directly (as an older build or a hand edit might have): versions whose expert fails its evals.
    const stored = async (extra: Record<string, unknown>) => {
      const parsed = parseCatalog({ skills: { [SKILL]: skill(expert("good", { system_prompt: "Be vague.", ...extra }), other("first")) } });
      if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
      const config = parsed.catalog.skills[SKILL];
      if (!config) throw new Error("no skill");
      return saveSkill(env.DB, SKILL, config, { author: "seed" });
    };
    const ungated = await stored({});
    const gated = await stored({ eval_settings: { gate: true }, description: "Gated, failing." });
    expect((await admin("PUT", `/skills/${SKILL}`, skill(expert("good", { description: "Live and passing." }), other("first")))).status).toBe(200);
    const live = await version();

    const refused = await admin("POST", `/skills/${SKILL}/versions/${ungated}/restore?require_evals=1`);
    expect(refused.status).toBe(409);
    expect(refused.problems[0]?.message).toContain("eval `bounds` of expert `ask` fails");
    expect(await version()).toBe(live);

    const cookie = await signInAs("alice");
    const token = csrfIn(await (await dashboardFetch(`/admin/catalog/${SKILL}`, { headers: { cookie } })).text());
    const page = await dashboardFetch(`/admin/catalog/${SKILL}/versions/${gated}/restore`, form({ csrf: token }, cookie));
    expect(page.status).toBe(409);
    expect(await page.text()).toContain(`v${gated} of ${SKILL} was not restored`);
    expect(await version()).toBe(live);
    // Without gate in the restored version, the dashboard restores as before.
    const restored = await dashboardFetch(`/admin/catalog/${SKILL}/versions/${ungated}/restore`, form({ csrf: token }, cookie));
    expect(restored.status).toBe(303);
    expect(await version()).toBe(Number(live) + 1);
  });
});
