import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFixtureServers, type RunningFixtureServers } from "../../fixtures/fixture-servers";
import { readFixtureStats, taggedBase } from "../../fixtures/fixture-stats-client";
import { loadCatalog } from "../harness/catalog-admin";
import { startFakeOpenAI, textReply, toolCallsReply, toolResultMessages, type FakeOpenAIServer } from "../harness/fake-openai-server";
import { connectMcpClient, resultText, type McpTestClient } from "../harness/mcp-clients";
import { startWranglerDev, type WranglerDev } from "../harness/wrangler-dev";
import { readRuns, runIds } from "../faults/run-records";

const USERS = 10;
const CALLS_PER_USER = 5;
const WALL_CLOCK_LIMIT_MS = 60_000;

/**
 * 50 expert calls from 10 callers at once through `wrangler dev`, each call a real two-step
 * run (the fake model asks the fixture server to echo a marker, then answers with what came
 * back). Every answer must carry its own caller's marker, every run must be on record, nothing
 * may fail.
 *
 * The callers are 10 skills, not 10 users: with AUTH=none every loopback request is the one dev
 * user, and the dev identity provider signs in one configured DEV_USER, so wrangler dev cannot
 * mint tokens for 10 users. A skill is its own endpoint and its own ExpertSession Durable Object
 * (tenant:skill:user), which is the isolation boundary a second user would also get.
 */
describe("load: 50 concurrent expert calls from 10 callers", () => {
  let dev: WranglerDev;
  let fake: FakeOpenAIServer;
  let fixtures: RunningFixtureServers;
  let fxBase = "";
  const skills = Array.from({ length: USERS }, (_, i) => `user-${i}`);

  beforeAll(async () => {
    [fixtures, fake] = await Promise.all([startFixtureServers(), startFakeOpenAI({ record: false })]);
    fxBase = taggedBase(fixtures.urls.echo, "load");
    // Echo the marker of the user turn through the fixture, then answer with what it returned.
    fake.reset((request) => {
      const results = toolResultMessages(request);
      if (results.length > 0) return textReply(`answer: ${results.map((r) => r.content).join(" ")}`);
      const user = String(request.messages.filter((m) => m.role === "user").at(-1)?.content);
      const marker = /marker-[a-z0-9-]+/.exec(user)?.[0] ?? "no-marker";
      return toolCallsReply({ name: "fx__echo", arguments: { text: marker } });
    });
    dev = await startWranglerDev();
    const expert = {
      name: "answer",
      description: "Answers through the fixture echo.",
      internal_tools: { fx: ["echo"] },
      provider: "openai-compatible" as const,
      base_url: fake.baseURL,
      model: "fake-fast",
      budget: { max_steps: 3, timeout_ms: 30_000, max_output_tokens: 512, max_tool_calls: 2, max_tool_result_bytes: 2_048 },
    };
    const server = { fx: { url: `${fxBase}/mcp`, transport: "streamable-http" as const } };
    await loadCatalog(dev.baseUrl, {
      skills: Object.fromEntries(["default", ...skills].map((name) => [name, { servers: server, experts: [expert] }])),
    });
  });
  afterAll(async () => {
    await dev?.stop();
    await Promise.allSettled([fake?.close(), fixtures?.stop()]);
  });

  it("answers every call with its own caller's marker, records every run, and fails none", async () => {
    const before = await runIds(dev.persistDir);
    const clients: McpTestClient[] = await Promise.all(
      skills.map((skill, i) => connectMcpClient(i % 2 === 0 ? "v2-2025" : "v2-2026", `${dev.baseUrl}/s/${skill}/mcp`, { timeoutMs: WALL_CLOCK_LIMIT_MS })),
    );
    const started = performance.now();
    try {
      const calls = clients.flatMap((client, u) =>
        Array.from({ length: CALLS_PER_USER }, async (_, c) => {
          const marker = `marker-u${u}-c${c}`;
          const result = await client.callTool("answer", { query: `Please echo ${marker}.` });
          return { u, marker, isError: result.isError ?? false, text: resultText(result) };
        }),
      );
      const answers = await Promise.all(calls);
      const wallMs = performance.now() - started;
      console.log(`load: ${answers.length} calls from ${USERS} callers in ${Math.round(wallMs)} ms`);
      expect(wallMs).toBeLessThan(WALL_CLOCK_LIMIT_MS);

      expect(answers.filter((a) => a.isError)).toEqual([]);
      for (const answer of answers) {
        expect(answer.text).toMatch(new RegExp(`^answer: ${answer.marker}\\b`));
        // No other caller's marker leaked into this answer.
        expect(answer.text.match(/marker-u\d+-c\d+/g)).toEqual([answer.marker]);
      }
      expect((await readFixtureStats(fxBase)).calls.echo).toBe(USERS * CALLS_PER_USER);

      const fresh = (await readRuns(dev.persistDir)).filter((run) => !before.has(run.id));
      expect(fresh).toHaveLength(USERS * CALLS_PER_USER);
      expect(fresh.filter((run) => run.outcome !== "ok")).toEqual([]);
      // Each caller's runs are in that caller's own session, five each.
      const bySkill = new Map<string, Set<string>>();
      for (const run of fresh) bySkill.set(run.skill, (bySkill.get(run.skill) ?? new Set()).add(run.file));
      expect([...bySkill.keys()].sort()).toEqual([...skills].sort());
      for (const skill of skills) {
        expect(fresh.filter((run) => run.skill === skill)).toHaveLength(CALLS_PER_USER);
        expect(bySkill.get(skill)?.size).toBe(1);
      }
      expect(new Set(fresh.map((run) => run.file)).size).toBe(USERS);
    } finally {
      await Promise.allSettled(clients.map((client) => client.close()));
    }
  });
});
