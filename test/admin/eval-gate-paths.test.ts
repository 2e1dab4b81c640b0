import { env } from "cloudflare:test";
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from "vitest";
import { saveSkill } from "../../src/catalog/catalog-store";
import { parseCatalog } from "../../src/catalog/parse-catalog";
import { setModelResolverForTests } from "../../src/experts/models/model-resolver-override";
import { taggedBase } from "../fixtures/fixture-stats-client";
import { scriptedModel, usage } from "../support/workers/scripted-model";
import { admin } from "./admin-test-client";

/**
 * Every admin write that changes what an expert does passes the one eval gate (src/admin/skill-writes.ts),
 * and the stored gate decides on the write that turns it off. The scripted model answers well
 * unless its system prompt says "Be vague.", so a stored version with that prompt fails its eval.
 */
const fixtures = inject("fixtureServers");
const echo = taggedBase(fixtures.echo, "eval-gate-paths");
const SKILL = "eval-gate-paths";

const expert = (extra: Record<string, unknown> = {}) => ({
  name: "ask",
  description: "Answers questions.",
  internal_tools: { echo: ["echo"] },
  provider: "openai-compatible",
  base_url: "http://127.0.0.1:9/v1",
  model: "reads-prompt",
  evals: [{ name: "bounds", arguments: { query: "What bounds loops?" }, assert: [{ type: "contains", value: "bound loops" }] }],
  eval_settings: { gate: true },
  ...extra,
});
const servers = { echo: { url: `${echo}/mcp`, transport: "streamable-http" }, spare: { url: `${echo}/mcp`, transport: "streamable-http" } };
const skill = (...experts: unknown[]) => ({ servers, experts });
const VAGUE = { system_prompt: "Be vague." };
/** A candidate that also turns its gate off: the stored gate still decides. */
const VAGUE_UNGATED = { ...VAGUE, eval_settings: { gate: false } };

/** Stores a version directly (as an older build or a hand edit might have), past the gate. */
async function seed(document: unknown): Promise<number> {
  const parsed = parseCatalog({ skills: { [SKILL]: document } });
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
  const config = parsed.catalog.skills[SKILL];
  if (!config) throw new Error("no skill");
  return saveSkill(env.DB, SKILL, config, { author: "seed" });
}

const version = async () => Number((await admin("GET", `/skills/${SKILL}`)).body.version);

describe("every admin write path goes through the eval gate", () => {
  /** Eval runs the gate started (one per model resolution). */
  let evalRuns = 0;
  beforeAll(() => {
    setModelResolverForTests(() => {
      evalRuns += 1;
      return scriptedModel([
        (options) => {
          const vague = JSON.stringify(options.prompt.filter((message) => message.role === "system")).includes("Be vague");
          return {
            content: [{ type: "text", text: vague ? "It depends." : "Budgets bound loops." }],
            finishReason: { unified: "stop", raw: "stop" },
            usage: usage(10, 5),
            warnings: [],
          };
        },
      ]);
    });
  });
  afterAll(() => setModelResolverForTests(undefined));

  describe("with a stored version whose gated expert fails its eval", () => {
    let older = 0;
    beforeEach(async () => {
      older = await seed(skill(expert({ ...VAGUE_UNGATED, description: "Older." })));
      await seed(skill(expert(VAGUE)));
    });

    const paths: Array<[string, string, string, unknown]> = [
      ["the skill document (a tool policy change)", "PUT", `/skills/${SKILL}`, { ...skill(expert(VAGUE_UNGATED)), tool_policy: { blocked: ["echo__*"] } }],
      ["one expert", "PUT", `/skills/${SKILL}/experts/ask`, expert({ ...VAGUE, description: "Answers, edited." })],
      ["one expert, with ?require_evals=1", "PUT", `/skills/${SKILL}/experts/ask?require_evals=1`, expert({ ...VAGUE, description: "Answers, edited." })],
      ["a renamed expert", "PUT", `/skills/${SKILL}/experts/ask`, expert({ ...VAGUE, name: "ask_renamed", eval_settings: { gate: false } })],
      ["a server added", "POST", `/skills/${SKILL}/servers`, { id: "extra", url: `${echo}/mcp`, transport: "streamable-http" }],
      ["a server changed", "PUT", `/skills/${SKILL}/servers/spare`, { url: `${echo}/mcp?changed=1`, transport: "streamable-http" }],
      ["a server deleted", "DELETE", `/skills/${SKILL}/servers/spare`, undefined],
      ["the catalog push", "PUT", `/catalog`, { skills: { [SKILL]: skill(expert({ ...VAGUE_UNGATED, description: "Pushed." })) } }],
    ];
    for (const [name, method, path, body] of paths) {
      it(`refuses ${name}, naming the failing eval; nothing is saved`, async () => {
        const before = await version();
        const refused = await admin(method, path, body);
        expect(refused.status, JSON.stringify(refused.body)).toBe(409);
        expect(refused.problems[0]).toMatchObject({
          path: `$.skills.${SKILL}.experts[0].evals[0]`,
          message: expect.stringMatching(/^eval `bounds` of expert `ask(_renamed)?` fails: the answer does not contain "bound loops"/),
        });
        expect(await version()).toBe(before);
      });
    }

    it("refuses a rollback to a version that fails, through the stored gate; nothing is saved", async () => {
      const before = await version();
      const refused = await admin("POST", `/skills/${SKILL}/versions/${older}/restore`);
      expect(refused.status).toBe(409);
      expect(refused.problems[0]?.message).toContain("eval `bounds` of expert `ask` fails");
      expect(await version()).toBe(before);
    });

    it("lets an explicit override through without running an eval, logged in the version history with its reason", async () => {
      const runs = evalRuns;
      const saved = await admin("POST", `/skills/${SKILL}/servers?override_eval_gate=provider%20outage&note=add%20extra`, {
        id: "extra",
        url: `${echo}/mcp`,
        transport: "streamable-http",
      });
      expect(saved.status, JSON.stringify(saved.body)).toBe(201);
      expect(evalRuns).toBe(runs);
      const restored = await admin("POST", `/skills/${SKILL}/versions/${older}/restore?override_eval_gate=rolling%20back%20an%20outage`);
      expect(restored.status).toBe(200);
      const history = (await admin("GET", `/skills/${SKILL}/versions`)).body.versions as Array<{ version: number; note: string | null }>;
      expect(history.slice(0, 2).map((entry) => entry.note)).toEqual([
        `restored from version ${older}; eval gate overridden by dev for ${SKILL}/ask: rolling back an outage`,
        `add extra; eval gate overridden by dev for ${SKILL}/ask: provider outage`,
      ]);
      const empty = await admin("PUT", `/skills/${SKILL}/experts/ask?override_eval_gate=%20`, expert());
      expect(empty.status).toBe(400);
      expect(String(empty.body.error)).toContain("override_eval_gate");
    });
  });

  describe("turning the gate off is decided by the stored gate", () => {
    beforeEach(async () => {
      await seed(skill(expert()));
    });

    it("refuses one write that turns the gate off and makes the prompt vague, on every path", async () => {
      const before = await version();
      const offAndVague = expert({ ...VAGUE, eval_settings: { gate: false } });
      for (const [method, path, body] of [
        ["PUT", `/skills/${SKILL}`, skill(offAndVague)],
        ["PUT", `/skills/${SKILL}/experts/ask`, offAndVague],
        ["PUT", `/skills/${SKILL}/experts/ask`, { ...offAndVague, evals: undefined, eval_settings: undefined }],
      ] as const) {
        const refused = await admin(method, path, body);
        expect(refused.status, `${method} ${path}: ${JSON.stringify(refused.body)}`).toBe(409);
        expect(refused.problems[0]?.message).toContain("eval `bounds` of expert `ask` fails");
      }
      expect(await version()).toBe(before);
    });

    it("saves the gate turned off alone (its evals still pass), after which a vague prompt is no longer gated", async () => {
      const before = await version();
      const runs = evalRuns;
      expect((await admin("PUT", `/skills/${SKILL}/experts/ask`, expert({ eval_settings: { gate: false } }))).status).toBe(200);
      expect(evalRuns).toBe(runs + 1);
      expect((await admin("PUT", `/skills/${SKILL}/experts/ask`, expert({ ...VAGUE, eval_settings: { gate: false } }))).status).toBe(200);
      expect(await version()).toBe(before + 2);
    });
  });
});
