import { env } from "cloudflare:test";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { listVersions } from "../../src/catalog/catalog-store";
import { setModelResolverForTests } from "../../src/experts/models/model-resolver-override";
import { META_RUN } from "../../src/mcp/delivery/expert-tool-result";
import { sessionStub } from "../../src/experts/session/session-name";
import { compiledSkillKey, KV_PREFIXES } from "../../src/storage-keys";
import { uniqueSkill } from "../support/catalog-test-data";
import { scriptedModel } from "../support/workers/scripted-model";
import { connectClient } from "../mcp/mcp-test-client";
import { admin } from "./admin-test-client";

// The built-in docs server through the Worker's own service binding: a real downstream server.
const docs = { binding: "SELF", url: "http://slipsnisse.internal/demo/docs/mcp", transport: "streamable-http" };
const expert = (name: string, tools: string[]) => ({
  name,
  description: `Expert ${name}.`,
  internal_tools: { docs: tools },
  provider: "openai-compatible",
  base_url: "http://127.0.0.1:9/v1",
  model: "never-called",
});

function session(skill: string) {
  return sessionStub(env, skill, "local:dev");
}

describe("skills are kept apart", () => {
  let model = scriptedModel([{ text: "unused" }]);
  beforeAll(() => setModelResolverForTests(() => model));
  afterAll(() => setModelResolverForTests(undefined));

  it("saving skill A rewrites only A's KV entry and version; B's stay byte for byte", async () => {
    const [a, b] = [uniqueSkill("iso-a"), uniqueSkill("iso-b")];
    await admin("PUT", `/skills/${a}`, { servers: { docs }, experts: [expert("ask_a", ["search_docs"])] });
    await admin("PUT", `/skills/${b}`, { servers: { docs }, experts: [expert("ask_b", ["search_docs"])] });
    const bBefore = await env.CACHE.get(compiledSkillKey(b));
    const bVersions = await listVersions(env.DB, b);

    await admin("POST", `/skills/${a}/experts`, expert("ask_a2", ["read_doc"]));
    expect(await env.CACHE.get(compiledSkillKey(a), "json")).toMatchObject({ version: 2 });
    expect(await env.CACHE.get(compiledSkillKey(b))).toBe(bBefore);
    expect(await listVersions(env.DB, b)).toEqual(bVersions);
  });

  it("a change to a skill's experts is what its MCP endpoint serves on the next request, for both protocol eras", async () => {
    const skill = uniqueSkill("relist");
    await admin("PUT", `/skills/${skill}`, { servers: { docs }, experts: [expert("first", ["search_docs"])] });
    for (const era of ["2025", "2026"] as const) {
      const client = await connectClient(`/s/${skill}/mcp`, era);
      // A 2026-07-28 client caches the list for its ttlMs (that is how it learns of changes), so
      // the server's next answer is seen by a request that does not hit that cache.
      const lister = era === "2026" ? () => connectClient(`/s/${skill}/mcp`, era) : async () => client;
      try {
        const before = (await client.listTools()).tools.map((tool) => tool.name);
        await admin("PUT", `/skills/${skill}/experts/first`, { ...expert(`renamed_${era}`, ["search_docs"]) });
        const after = await lister();
        expect((await after.listTools()).tools.map((tool) => tool.name)).toEqual([`renamed_${era}`]);
        if (after !== client) await after.close();
        expect(before).toHaveLength(1);
        await admin("PUT", `/skills/${skill}/experts/renamed_${era}`, expert("first", ["search_docs"]));
      } finally {
        await client.close();
      }
    }
  });

  it("runs land in the user's session of that skill only, and tool-list caches are keyed by skill", async () => {
    const [a, b] = [uniqueSkill("runs-a"), uniqueSkill("runs-b")];
    // The echo fixture sends no ttlMs, so its tool list is cached (the docs server asks for none).
    const echo = { url: `${inject("fixtureServers").echo}/mcp` };
    await admin("PUT", `/skills/${a}`, { servers: { docs: echo }, experts: [expert("ask", ["echo"])] });
    await admin("PUT", `/skills/${b}`, { servers: { docs: echo }, experts: [expert("ask", ["echo"])] });
    model = scriptedModel([{ text: "From A." }]);
    const client = await connectClient(`/s/${a}/mcp`, "2025");
    const result = await client.callTool({ name: "ask", arguments: { query: "hi" } });
    await client.close();
    const runId = result._meta?.[META_RUN] as string;

    expect(await session(a).run(runId)).toMatchObject({ id: runId, skill: a, outcome: "ok" });
    expect(await session(b).run(runId)).toBeNull();
    expect(await session(b).recentRuns()).toEqual([]);
    const cached = async (skill: string) => (await env.CACHE.list({ prefix: `${KV_PREFIXES.downstreamTools}${skill}:` })).keys.length;
    expect(await cached(a)).toBeGreaterThan(0);
    expect(await cached(b)).toBe(0);
  });

  it("a blocked tool_policy pattern wins over the expert's whitelist: the model is never offered the tool", async () => {
    const skill = uniqueSkill("blocked");
    await admin("PUT", `/skills/${skill}`, {
      servers: { docs },
      tool_policy: { blocked: ["docs__read_*"] },
      experts: [expert("ask", ["search_docs", "read_doc"])],
    });
    model = scriptedModel([{ calls: [{ name: "docs__read_doc", input: { path: "readme#1" } }] }, { text: "Done." }]);
    const client = await connectClient(`/s/${skill}/mcp`, "2026");
    const result = await client.callTool({ name: "ask", arguments: { query: "read it" } });
    await client.close();
    expect(model.doGenerateCalls[0]?.tools?.map((tool) => tool.name)).toEqual(["docs__search_docs"]);
    expect(result._meta?.["slipsnisse.dev/usage"]).toMatchObject({ toolCalls: 0, refusedToolCalls: 1 });
  });
});
