import { env } from "cloudflare:test";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { replaceCatalog } from "../../src/catalog/catalog-service";
import { setModelResolverForTests } from "../../src/experts/models/model-resolver-override";
import { taggedBase } from "../fixtures/fixture-stats-client";
import { scriptedModel } from "../support/workers/scripted-model";
import { admin } from "../admin/admin-test-client";
import { dashboardFetch, signInAs } from "./dashboard-test-client";
import { waitFor } from "../support/wait-for";

const fixtures = inject("fixtureServers");
const echo = taggedBase(fixtures.echo, "eval-pages");
const SKILL = "eval-pages";

const skill = (description: string) => ({
  servers: { echo: { url: `${echo}/mcp`, transport: "streamable-http" } },
  pricing: { "openai-compatible": { good: { input_per_million: 1, output_per_million: 1 } } },
  experts: [
    {
      name: "ask",
      description,
      internal_tools: { echo: ["echo"] },
      provider: "openai-compatible",
      base_url: "http://127.0.0.1:9/v1",
      model: "good",
      evals: [{ name: "bounds", arguments: { query: "What bounds loops?" }, assert: [{ type: "contains", value: "bound loops" }] }],
    },
  ],
});

describe("dashboard: an expert's evals page", () => {
  let cookie: string;
  beforeAll(async () => {
    expect((await replaceCatalog(env, { skills: { [SKILL]: skill("first") } }, "test")).ok).toBe(true);
    setModelResolverForTests((config) => scriptedModel([{ text: config.model === "good" ? "Budgets bound loops." : "It depends." }]));
    cookie = await signInAs("alice");
  });
  afterAll(() => setModelResolverForTests(undefined));
  const page = async () => {
    const response = await dashboardFetch(`/admin/catalog/${SKILL}/experts/ask/evals`, { headers: { cookie } });
    expect(response.status).toBe(200);
    return response.text();
  };
  const run = (models: string[]) => admin("POST", `/skills/${SKILL}/experts/ask/evals/run`, { models });

  it("shows the latest results per model with each failure and its trace, and the history across catalog versions", async () => {
    expect(await page()).toContain("No eval results yet");

    const first = await run(["openai-compatible:good", "openai-compatible:vague"]);
    expect(first.status).toBe(200);
    // The report is written after the answer: look until the page has it.
    let text = await waitFor("the first report on the page", async () => {
      const shown = await page();
      return shown.includes("Latest, catalog version 1") ? shown : undefined;
    });
    expect(text).toContain("Latest, catalog version 1");
    expect(text).toMatch(/<code>openai-compatible:good<\/code><\/td><td>1\/1<\/td>/);
    expect(text).toMatch(/<code>openai-compatible:vague<\/code><\/td><td>0\/1<\/td>/);
    expect(text).toContain("✗ bounds: the answer does not contain &quot;bound loops&quot;");
    expect(text).toMatch(/<a href="\/admin\/runs\/[0-9a-f-]{36}">trace<\/a>/);

    expect((await admin("PUT", `/skills/${SKILL}`, skill("second"))).status).toBe(200);
    await run(["openai-compatible:good"]);
    text = await waitFor("the second version's report on the page", async () => {
      const shown = await page();
      return shown.includes("Latest, catalog version 2") ? shown : undefined;
    });
    expect(text).toContain("Latest, catalog version 2");
    const history = text.slice(text.indexOf("History across catalog versions"));
    expect([...history.matchAll(/<td>v(\d)<\/td><td><code>([^<]+)<\/code><\/td><td>(\d\/\d)<\/td>/g)].map((m) => `${m[1]} ${m[2]} ${m[3]}`)).toEqual([
      "2 openai-compatible:good 1/1",
      "1 openai-compatible:good 1/1",
      "1 openai-compatible:vague 0/1",
    ]);
  });

  it("refuses a malformed name and is admin-only", async () => {
    expect((await dashboardFetch(`/admin/catalog/${SKILL}/experts/no%20such/evals`, { headers: { cookie } })).status).toBe(404);
    const member = await dashboardFetch(`/admin/catalog/${SKILL}/experts/ask/evals`, { headers: { cookie: await signInAs("bob") } });
    expect(member.status).toBe(403);
  });
});
