import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFixtureServers, type RunningFixtureServers } from "../../fixtures/fixture-servers";
import { readFixtureStats, taggedBase } from "../../fixtures/fixture-stats-client";
import { loadCatalog } from "../harness/catalog-admin";
import { startFakeOpenAI, textReply, toolCallsReply, toolResultMessages, type FakeOpenAIServer } from "../harness/fake-openai-server";
import { connectMcpClient, resultText, type McpTestClient } from "../harness/mcp-clients";
import { bearer, signInAs } from "../harness/oauth-sign-in";
import { startWranglerDev, type WranglerDev } from "../harness/wrangler-dev";
import { projectWithSecrets, type ProjectWithSecrets } from "../oauth/project-with-secrets";
import { adminRuns, adminRunSteps } from "./admin-runs-client";

const LOGINS = Array.from({ length: 10 }, (_, i) => `user${String(i + 1).padStart(2, "0")}`);
const CALLS_PER_USER = 5;
const WALL_CLOCK_LIMIT_MS = 60_000;
const RUN_META = "slipsnisse.dev/run";
const MARKER = /marker-user\d\d-c\d/g;

/**
 * 50 expert calls from 10 distinct users at once through `wrangler dev` with OAuth on: each user
 * signs in through the dev identity provider (DEV_USERS) and calls with their own bearer token.
 * Each call is a real two-step run: the fake model reads the marker (the caller's login and call
 * number) from the user turn, asks the fixture server to echo it, then answers with what came
 * back. Every answer must carry its own caller's marker and no other, every run must be on record
 * in that user's own session (read back through the admin runs API with ADMIN_TOKEN), nothing
 * may fail.
 */
describe("load: 50 concurrent expert calls from 10 signed-in users", () => {
  let project: ProjectWithSecrets;
  let dev: WranglerDev;
  let fake: FakeOpenAIServer;
  let fixtures: RunningFixtureServers;
  let fxBase = "";
  let clients: McpTestClient[] = [];

  beforeAll(async () => {
    [project, fixtures, fake] = await Promise.all([projectWithSecrets(), startFixtureServers(), startFakeOpenAI({ record: false })]);
    fxBase = taggedBase(fixtures.urls.echo, "load");
    fake.reset((request) => {
      const results = toolResultMessages(request);
      if (results.length > 0) return textReply(`answer: ${results.map((r) => r.content).join(" ")}`);
      const user = String(request.messages.filter((m) => m.role === "user").at(-1)?.content);
      return toolCallsReply({ name: "fx__echo", arguments: { text: user.match(MARKER)?.[0] ?? "no-marker" } });
    });
    dev = await startWranglerDev({
      projectDir: project.dir,
      vars: { ENVIRONMENT: "local", AUTH: "oauth", IDP: "dev", DEV_USER: LOGINS[0] ?? "", DEV_USERS: LOGINS.join(",") },
    });
    await loadCatalog(
      dev.baseUrl,
      {
        skills: {
          default: {
            servers: { fx: { url: `${fxBase}/mcp`, transport: "streamable-http" } },
            experts: [
              {
                name: "answer",
                description: "Answers through the fixture echo.",
                internal_tools: { fx: ["echo"] },
                provider: "openai-compatible",
                base_url: fake.baseURL,
                model: "fake-fast",
                budget: { max_steps: 3, timeout_ms: 30_000, max_output_tokens: 512, max_tool_calls: 2, max_tool_result_bytes: 2_048 },
              },
            ],
          },
        },
      },
      bearer({ accessToken: project.adminToken }),
    );
    const sessions = await Promise.all(LOGINS.map((login) => signInAs(dev.baseUrl, login)));
    clients = await Promise.all(
      sessions.map((session, i) =>
        connectMcpClient(i % 2 === 0 ? "v2-2025" : "v2-2026", `${dev.baseUrl}/mcp`, { headers: bearer(session), timeoutMs: WALL_CLOCK_LIMIT_MS }),
      ),
    );
  });
  afterAll(async () => {
    await Promise.allSettled(clients.map((client) => client.close()));
    await dev?.stop();
    await Promise.allSettled([fake?.close(), fixtures?.stop(), project?.remove()]);
  });

  it("answers every call with its own caller's marker, records every run in the caller's session, and fails none", async () => {
    const started = performance.now();
    const calls = clients.flatMap((client, u) =>
      Array.from({ length: CALLS_PER_USER }, async (_, c) => {
        const login = LOGINS[u] ?? "";
        const marker = `marker-${login}-c${c}`;
        const result = await client.callTool("answer", { query: `I am ${login}; please echo ${marker}.` });
        const runId = result._meta?.[RUN_META];
        return { login, marker, runId: typeof runId === "string" ? runId : "", isError: result.isError ?? false, text: resultText(result) };
      }),
    );
    const answers = await Promise.all(calls);
    const wallMs = performance.now() - started;
    console.log(`load: ${answers.length} calls from ${LOGINS.length} signed-in users in ${Math.round(wallMs)} ms`);
    // Throughput under load is what this bounds; no state records it.
    expect(wallMs).toBeLessThan(WALL_CLOCK_LIMIT_MS);

    expect(answers.filter((a) => a.isError)).toEqual([]);
    for (const answer of answers) {
      expect(answer.text).toMatch(new RegExp(`^answer: ${answer.marker}\\b`));
      // No other caller's marker leaked into this answer.
      expect(answer.text.match(MARKER)).toEqual([answer.marker]);
    }
    expect(new Set(answers.map((a) => a.runId)).size).toBe(LOGINS.length * CALLS_PER_USER);
    expect((await readFixtureStats(fxBase)).calls.echo).toBe(LOGINS.length * CALLS_PER_USER);

    const admin = { baseUrl: dev.baseUrl, token: project.adminToken };
    for (const login of LOGINS) {
      const runs = await adminRuns(admin, "default", `dev-${login}`);
      const mine = answers.filter((a) => a.login === login);
      expect(runs.map((run) => run.id).sort(), login).toEqual(mine.map((a) => a.runId).sort());
      expect(runs.filter((run) => run.outcome !== "ok" || run.userId !== `dev-${login}`)).toEqual([]);
      // The run in this user's session is the one that carried this user's marker.
      for (const answer of mine) {
        const steps = await adminRunSteps(admin, "default", `dev-${login}`, answer.runId);
        expect(
          steps
            .map((step) => step.text)
            .join(" ")
            .match(MARKER),
        ).toEqual([answer.marker]);
        expect(steps.flatMap((step) => step.toolCalls)).toMatchObject([{ name: "fx__echo", status: "ok" }]);
      }
    }
  });
});
