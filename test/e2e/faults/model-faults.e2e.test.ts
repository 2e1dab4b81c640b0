import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import type { RunningFixtureServers } from "../../fixtures/fixture-servers";
import { readFixtureStats } from "../../fixtures/fixture-stats-client";
import type { FixtureStats } from "../../fixtures/fixture-stats-schema";
import { type EchoExpertStack, startEchoExpertStack } from "../harness/echo-expert-stack";
import { errorReply, textReply, toolCallsReply, toolResultMessages, type FakeOpenAIServer } from "../harness/fake-openai-server";
import { connectMcpClient, resultText, type McpTestClient, type ToolCallResult } from "../harness/mcp-clients";
import { sharedWranglerDev } from "../harness/shared-wrangler-dev";
import type { WranglerDev } from "../harness/wrangler-dev";
import { adminRun } from "../load/admin-runs-client";
import { waitFor } from "../../support/wait-for";

const SKILL = "model-faults";
// With AUTH=none every loopback request is the local dev user (admin), whose session holds the runs.
const USER = "local:dev";
const HASTY_TIMEOUT_MS = 1_500;
const BRISK_TIMEOUT_MS = 4_000;
const USAGE_META = "slipsnisse.dev/usage";
const RUN_META = "slipsnisse.dev/run";

const budget = { max_steps: 6, timeout_ms: 20_000, max_output_tokens: 2_048, max_tool_calls: 6, max_tool_result_bytes: 4_096 };

/**
 * A misbehaving model behind an openai-compatible expert, through `wrangler dev`: rate limits and
 * 5xx are retried inside the budget, a hanging model is cut by timeout_ms, malformed and unknown
 * tool calls never reach the downstream server, and a model endpoint that is down gives an error
 * that names it. Every run is read back through the admin runs API.
 */
describe("model faults end to end", () => {
  let stack: EchoExpertStack;
  let dev: WranglerDev;
  let fake: FakeOpenAIServer;
  let fixtures: RunningFixtureServers;
  let client: McpTestClient;
  let fxBase = "";
  let statsBefore: FixtureStats;

  const expert = (name: string, baseURL: string, timeoutMs = budget.timeout_ms) => ({
    name,
    description: `The ${name} expert.`,
    internal_tools: { fx: ["echo"] },
    provider: "openai-compatible" as const,
    base_url: baseURL,
    model: "fake-faulty",
    budget: { ...budget, timeout_ms: timeoutMs },
  });

  const call = async (name: string, query: string) => {
    const started = performance.now();
    const result = await client.callTool(name, { query });
    return { result, text: resultText(result), elapsedMs: performance.now() - started };
  };
  const recordOf = async (result: ToolCallResult) => {
    const runId = result._meta?.[RUN_META];
    if (typeof runId !== "string") throw new Error(`no run id in ${JSON.stringify(result._meta)}`);
    return adminRun({ baseUrl: dev.baseUrl }, SKILL, USER, runId);
  };

  /** The Worker's log line holding every fragment; wrangler's output arrives through a pipe, so it is awaited (bounded). */
  const logLineWith = (...fragments: string[]): Promise<string> =>
    waitFor(
      `a log line with ${fragments.join(" and ")}`,
      () =>
        dev
          .logs()
          .split("\n")
          .find((candidate) => fragments.every((fragment) => candidate.includes(fragment))),
      10_000,
      100,
    );

  beforeAll(async () => {
    stack = await startEchoExpertStack({
      tag: "model-faults",
      onServer: { dev: await sharedWranglerDev(), skill: SKILL },
      experts: (model, servers) => [
        expert("steady", model.baseURL),
        expert("hasty", model.baseURL, HASTY_TIMEOUT_MS),
        expert("brisk", model.baseURL, BRISK_TIMEOUT_MS),
        expert("unplugged", `${servers.urls.dead}/v1`),
      ],
    });
    ({ dev, fake, fixtures, fxBase } = stack);
    client = await connectMcpClient("v2-2025", stack.mcpUrl, { timeoutMs: 60_000 });
  });
  afterAll(async () => {
    await client?.close();
    await stack?.stop();
  });
  beforeEach(async () => {
    statsBefore = await readFixtureStats(fxBase);
  });

  for (const status of [429, 503]) {
    it(`retries an HTTP ${status} from the model and answers when the next attempt succeeds`, async () => {
      fake.reset([errorReply(status, "slow down"), textReply(`answer after a ${status}`)]);
      const { result, text, elapsedMs } = await call("steady", `retry after ${status}`);
      expect(result.isError ?? false).toBe(false);
      expect(text).toMatch(new RegExp(`^answer after a ${status}`));
      expect(fake.requests).toHaveLength(2);
      // One backoff (a few hundred ms), well inside the 20 s budget. The backoff's length shows
      // only on the clock: the counts above cannot tell a short wait from a long one.
      expect(elapsedMs).toBeLessThan(10_000);
      expect(result._meta?.[USAGE_META]).toMatchObject({ retries: 1 });
      expect((await recordOf(result)).run).toMatchObject({ outcome: "ok", error: null });
    });
  }

  it("a 429 before every step's 200 still answers inside a 4 s budget, with the retries in usage and the run record", async () => {
    // With the AI SDK's flat 2 s retry waits, two rate-limited steps ran out the 4 s budget.
    fake.reset((request, i) => {
      if (i % 2 === 0) return errorReply(429, "slow down");
      return toolResultMessages(request).length === 0
        ? toolCallsReply({ name: "fx__echo", arguments: { text: "ping" } })
        : textReply("answered despite rate limits");
    });
    const { result, text } = await call("brisk", "rate-limited at every step");
    expect(result.isError ?? false).toBe(false);
    expect(text).toMatch(/^answered despite rate limits/);
    expect(fake.requests).toHaveLength(4);
    expect(result._meta?.[USAGE_META]).toMatchObject({ steps: 2, retries: 2, budgetExhausted: null });
    const { run } = await recordOf(result);
    expect(run).toMatchObject({ outcome: "ok", usage: { retries: 2 } });
    // The trace: one log line per retry, and the count on the run's closing line.
    // The runs' line goes with the run index flush, about a second after the run (run-index-outbox.ts).
    const finished = await logLineWith(run.id, '"message":"expert runs finished"');
    const runs = z
      .object({ runs: z.array(z.object({ runId: z.string(), retries: z.number() })) })
      .parse(JSON.parse(finished.slice(finished.indexOf("{")))).runs;
    expect(runs.find((entry) => entry.runId === run.id)?.retries).toBe(2);
    const retried = dev
      .logs()
      .split("\n")
      .filter((line) => line.includes('"message":"model call retried"') && line.includes('"expert":"brisk"'));
    expect(retried.length).toBeGreaterThanOrEqual(2);
  });

  it("waits the Retry-After a rate limit names when it fits, and says so when it does not", async () => {
    fake.reset([errorReply(429, "slow down", { "retry-after": "1" }), textReply("answered after the asked wait")]);
    const fits = await call("brisk", "retry after one second");
    expect(fits.text).toMatch(/^answered after the asked wait/);
    expect(fits.result._meta?.[USAGE_META]).toMatchObject({ retries: 1 });
    expect(fake.requests).toHaveLength(2);

    fake.reset([errorReply(429, "slow down", { "retry-after": "30" }), textReply("never")]);
    const tooLong = await call("brisk", "retry after thirty seconds");
    expect(tooLong.result.isError).toBe(true);
    expect(tooLong.text).toContain('rate-limited expert "brisk" (HTTP 429)');
    expect(tooLong.text).toContain("asked to wait 30000 ms");
    expect(fake.requests).toHaveLength(1);
    expect((await recordOf(tooLong.result)).run).toMatchObject({ outcome: "error", usage: { retries: 0, budgetExhausted: "timeout" } });
  });

  it("cuts a model that hangs at the expert's timeout_ms and says so", async () => {
    fake.reset([{ ...textReply("far too late"), delayMs: 15_000 }]);
    const { result, text, elapsedMs } = await call("hasty", "hang please");
    // The texts below show the cut happened; only the clock shows it happened at timeout_ms.
    expect(elapsedMs).toBeLessThan(HASTY_TIMEOUT_MS + 2_500);
    expect(text).toContain(`[budget exhausted (timeout): stopped after ${HASTY_TIMEOUT_MS} ms`);
    expect(text).not.toContain("far too late");
    expect((await recordOf(result)).run).toMatchObject({ outcome: "budget_exhausted", usage: { budgetExhausted: "timeout" } });
  });

  it("stops a model that keeps sending invalid tool arguments, and never calls the tool with them", async () => {
    fake.reset((_request, i) => toolCallsReply({ name: "fx__echo", arguments: i % 2 === 0 ? { text: 42 } : "{not json" }));
    const { result, text } = await call("steady", "echo something, badly");
    expect(result.isError).toBe(true);
    expect(text).toMatch(/Expert "steady" stopped: its model sent malformed arguments 3 times \(fx__echo\)/);
    // Two errors went back to the model; the third ended the run, long before max_steps.
    expect(fake.requests).toHaveLength(3);
    expect(
      toolResultMessages(fake.requests[2] ?? { model: "", messages: [] })
        .map((r) => r.content)
        .join(" "),
    ).toMatch(/input schema|JSON|parse/i);
    expect((await readFixtureStats(fxBase)).calls).toEqual(statsBefore.calls);
    const { run, steps } = await recordOf(result);
    expect(run).toMatchObject({ outcome: "error", error: expect.stringContaining("malformed arguments") });
    expect(steps.flatMap((step) => step.toolCalls.map((c) => c.status))).toEqual(["error", "error", "error"]);
  });

  it("refuses a tool name the expert was not given, executes nothing, and lets the model answer", async () => {
    fake.reset((request) =>
      toolResultMessages(request).length === 0
        ? toolCallsReply({ name: "fx__delete_everything", arguments: {} }, { name: "admin__drop_tables", arguments: { all: true } })
        : textReply("I cannot do that with my tools."),
    );
    const { result, text } = await call("steady", "delete everything");
    expect(result.isError ?? false).toBe(false);
    expect(text).toMatch(/^I cannot do that with my tools\./);
    expect(result._meta?.["slipsnisse.dev/usage"]).toMatchObject({ toolCalls: 0, refusedToolCalls: 2 });
    expect(fake.requests).toHaveLength(2);
    const after = await readFixtureStats(fxBase);
    expect(after.calls).toEqual(statsBefore.calls);
    const { run, steps } = await recordOf(result);
    expect(run.outcome).toBe("ok");
    expect(steps[0]?.toolCalls).toMatchObject([
      { name: "fx__delete_everything", status: "refused" },
      { name: "admin__drop_tables", status: "refused" },
    ]);
  });

  it("names a model endpoint that is down and asks whether the server is running", async () => {
    fake.reset([]);
    const { result, text, elapsedMs } = await call("unplugged", "anyone there?");
    expect(result.isError).toBe(true);
    expect(text).toContain(`could not reach ${fixtures.urls.dead}/v1`);
    expect(text).toMatch(/is the server running\?/i);
    // A refused connection must fail fast; nothing but the clock sees how long it took.
    expect(elapsedMs).toBeLessThan(15_000);
    expect(fake.requests).toHaveLength(0);
    expect((await recordOf(result)).run).toMatchObject({ outcome: "error", error: expect.stringContaining(fixtures.urls.dead) });
  });
});
