import { env } from "cloudflare:test";
import { askDocsCatalog } from "../mcp/expert-test-setup";
import type { Client } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { replaceCatalog } from "../../src/catalog/catalog-service";
import { setModelResolverForTests } from "../../src/experts/models/model-resolver-override";
import { META_RUN } from "../../src/mcp/delivery/expert-tool-result";
import { sessionStub } from "../../src/experts/session/session-name";
import { scriptedModel } from "../support/workers/scripted-model";
import { flushRunIndex } from "../support/workers/run-index-flush";
import { connectClient } from "../mcp/mcp-test-client";
import { admin, adminAs } from "./admin-test-client";

const SKILL = "runs-demo";
// The loopback dev user the MCP test client is signed in as (ENVIRONMENT=test, AUTH=none).
const USER = "local:dev";

const catalog = askDocsCatalog(SKILL);

describe("admin runs API", () => {
  let client: Client;
  const runIds: string[] = [];

  beforeAll(async () => {
    expect((await replaceCatalog(env, catalog, "test")).ok).toBe(true);
    client = await connectClient(`/s/${SKILL}/mcp`, "2025");
    setModelResolverForTests(() => scriptedModel([{ calls: [{ name: "docs__search_docs", input: { query: "budget" } }] }, { text: "Budgets bound loops." }]));
    const first = await client.callTool({ name: "ask_docs", arguments: { query: "first question" } });
    setModelResolverForTests(() => scriptedModel([{ text: "Second answer." }]));
    const second = await client.callTool({ name: "ask_docs", arguments: { query: "second question" } });
    runIds.push(first._meta?.[META_RUN] as string, second._meta?.[META_RUN] as string);
    await flushRunIndex(sessionStub(env, SKILL, USER));
  });
  afterAll(async () => {
    setModelResolverForTests(undefined);
    await client.close();
  });

  it("lists the user's recent runs in the skill, newest first, bounded by limit", async () => {
    const all = await admin("GET", `/skills/${SKILL}/runs?user=${encodeURIComponent(USER)}`);
    expect(all.status).toBe(200);
    const runs = all.body.runs as Array<Record<string, unknown>>;
    expect(runs.map((run) => run.id)).toEqual([...runIds].reverse());
    expect(runs[0]).toMatchObject({ skill: SKILL, expert: "ask_docs", userId: USER, outcome: "ok" });
    const one = await admin("GET", `/skills/${SKILL}/runs?user=${encodeURIComponent(USER)}&limit=1`);
    expect((one.body.runs as unknown[]).map((run) => (run as { id: string }).id)).toEqual([runIds[1]]);
  });

  it("returns one run with its steps and tool calls", async () => {
    const answer = await admin("GET", `/skills/${SKILL}/runs/${runIds[0]}?user=${encodeURIComponent(USER)}`);
    expect(answer.status).toBe(200);
    expect(answer.body.run).toMatchObject({ id: runIds[0], outcome: "ok", usage: { steps: 2, toolCalls: 1 } });
    const steps = answer.body.steps as Array<{ index: number; text: string; toolCalls: Array<{ name: string; status: string }> }>;
    expect(steps.map((step) => step.index)).toEqual([0, 1]);
    expect(steps[0]?.toolCalls).toMatchObject([{ name: "docs__search_docs", status: "ok" }]);
    expect(steps[1]?.text).toBe("Budgets bound loops.");
  });

  it("shows another user's session as empty: runs are per user", async () => {
    const answer = await admin("GET", `/skills/${SKILL}/runs?user=dev:someone-else`);
    expect(answer.status).toBe(200);
    expect(answer.body.runs).toEqual([]);
  });

  it("answers 404 for an unknown run and an unknown skill", async () => {
    const run = await admin("GET", `/skills/${SKILL}/runs/${crypto.randomUUID()}?user=${encodeURIComponent(USER)}`);
    expect(run.status).toBe(404);
    expect(run.body.error).toMatch(/has no run/);
    const skill = await admin("GET", `/skills/no-such-skill/runs?user=${encodeURIComponent(USER)}`);
    expect(skill.status).toBe(404);
  });

  it("lists the skill's runs across users from the run index when ?user= is left out", async () => {
    const answer = await admin("GET", `/skills/${SKILL}/runs`);
    expect(answer.status).toBe(200);
    const runs = answer.body.runs as Array<Record<string, unknown>>;
    expect(runs.map((run) => run.id)).toEqual([...runIds].reverse());
    expect(runs[0]).toMatchObject({ skill: SKILL, expert: "ask_docs", user: { id: USER }, outcome: "ok", toolCalls: 0 });
    expect(runs[1]).toMatchObject({ toolCalls: 1, steps: 2 });
  });

  it("opens one run's full trace without ?user=, by the index row's session", async () => {
    for (const path of [`/runs/${runIds[0]}`, `/skills/${SKILL}/runs/${runIds[0]}`]) {
      const answer = await admin("GET", path);
      expect(answer.status).toBe(200);
      expect(answer.body.summary).toMatchObject({ id: runIds[0], user: { id: USER } });
      expect(answer.body.session).toBe(`${env.TENANT}:${SKILL}:${encodeURIComponent(USER)}`);
      expect(answer.body.run).toMatchObject({ id: runIds[0], args: JSON.stringify({ query: "first question" }), answer: "Budgets bound loops." });
      const steps = answer.body.steps as Array<{ toolCalls: Array<Record<string, unknown>> }>;
      expect(steps[0]?.toolCalls[0]).toMatchObject({ server: "docs", tool: "search_docs", args: JSON.stringify({ query: "budget" }), status: "ok" });
      expect(String(steps[0]?.toolCalls[0]?.result)).toMatch(/budget/i);
    }
    // A run of another skill is not found under this one.
    expect((await admin("GET", `/skills/no-such-skill/runs/${runIds[0]}`)).status).toBe(404);
  });

  it.each([
    ["a limit of 0", `/skills/${SKILL}/runs?user=a&limit=0`, /limit/],
    ["a limit over 200", `/skills/${SKILL}/runs?user=a&limit=201`, /limit/],
    ["a fractional limit", `/skills/${SKILL}/runs?user=a&limit=1.5`, /limit/],
    ["a bad skill name", `/skills/Bad_Skill/runs?user=a`, /skill name/],
    ["a run id that is not a UUID", `/skills/${SKILL}/runs/not-a-run?user=a`, /run id/],
  ])("answers 400 for %s", async (_label, path, message) => {
    const answer = await admin("GET", path);
    expect(answer.status).toBe(400);
    expect(answer.body.error).toMatch(message);
  });

  it("says what a user id looks like when ?user= is not one, with ids as the Worker mints them", async () => {
    const answer = await admin("GET", `/skills/${SKILL}/runs?user=${"x".repeat(201)}`);
    expect(answer.status).toBe(400);
    const fix = String(answer.body.fix);
    expect(fix).toContain("dev-alice");
    expect(fix).toContain("local:dev");
    expect(fix).toContain("GET /admin/api/whoami");
    expect(fix).not.toContain("dev:alice");
  });

  it("refuses a signed-in member who is not an admin", async () => {
    const response = await adminAs(new Request(`https://slipsnisse.example.com/admin/api/skills/${SKILL}/runs?user=${encodeURIComponent(USER)}`), {
      props: { userId: "gh:2", login: "bob", role: "member" },
    });
    expect(response.status).toBe(403);
    expect(JSON.stringify(await response.json())).not.toContain(runIds[0] ?? "missing");
  });
});
