import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startEchoServer } from "../../fixtures/echo-mcp-server";
import { startFixtureServers, type RunningFixtureServers } from "../../fixtures/fixture-servers";
import { readFixtureStats, taggedBase } from "../../fixtures/fixture-stats-client";
import type { LoopbackServer } from "../../fixtures/loopback-http";
import { startMalformedJsonRpcServer, type MalformedJsonRpcServer } from "../../fixtures/malformed-json-rpc-server";
import { startFakeOpenAI, textReply, toolCallsReply, toolResultMessages, type FakeOpenAIServer } from "../harness/fake-openai-server";
import { connectMcpClient, resultText, type McpTestClient, type ToolCallResult } from "../harness/mcp-clients";
import { pushSharedSkill, sharedWranglerDev } from "../harness/shared-wrangler-dev";
import type { WranglerDev } from "../harness/wrangler-dev";
import { adminRun } from "../load/admin-runs-client";
import { waitFor } from "../../support/wait-for";

const SKILL = "downstream-faults";
const USER = "local:dev";
const RUN_META = "slipsnisse.dev/run";
const SLOW_CALL_TIMEOUT_MS = 1_000;
const GARBLED_CALL_TIMEOUT_MS = 5_000;
const budget = { max_steps: 3, timeout_ms: 45_000, max_output_tokens: 2_048, max_tool_calls: 2, max_tool_result_bytes: 4_096 };

/**
 * Downstream servers that fail while an expert uses them, through `wrangler dev`: killed
 * mid-call, slower than call_timeout_ms, answering malformed JSON-RPC, or forgetting the
 * session between two calls. The fake model calls the tool the query names
 * (`call <server>__<tool> <json args>`), then answers with what the tool result said, so the
 * error the sub-agent saw is in the answer; runs are read back through the admin runs API.
 */
describe("downstream faults end to end", () => {
  let dev: WranglerDev;
  let fake: FakeOpenAIServer;
  let fixtures: RunningFixtureServers;
  let doomed: LoopbackServer;
  let malformed: MalformedJsonRpcServer;
  let client: McpTestClient;
  let fxBase = "";

  const expert = (server: string, tools: string[]) => ({
    name: `ask_${server}`,
    description: `Uses ${server}.`,
    internal_tools: { [server]: tools },
    provider: "openai-compatible" as const,
    base_url: fake.baseURL,
    model: "fake-tool-caller",
    budget,
  });

  const call = async (server: string, tool: string, args: Record<string, unknown>) => {
    const started = performance.now();
    const result = await client.callTool(`ask_${server}`, { query: `call ${server}__${tool} ${JSON.stringify(args)}` });
    return { result, text: resultText(result), elapsedMs: performance.now() - started };
  };
  const recordOf = async (result: ToolCallResult) => {
    const runId = result._meta?.[RUN_META];
    if (typeof runId !== "string") throw new Error(`no run id in ${JSON.stringify(result._meta)}`);
    return adminRun({ baseUrl: dev.baseUrl }, SKILL, USER, runId);
  };

  beforeAll(async () => {
    [fixtures, fake, doomed, malformed] = await Promise.all([
      startFixtureServers(),
      startFakeOpenAI(),
      startEchoServer("doomed"),
      startMalformedJsonRpcServer(),
    ]);
    fxBase = taggedBase(fixtures.urls.echo, "downstream-faults");
    fake.reset((request) => {
      const results = toolResultMessages(request);
      if (results.length > 0) return textReply(`tool said: ${results.map((r) => r.content).join(" | ")}`);
      const user = String(request.messages.filter((m) => m.role === "user").at(-1)?.content);
      const asked = /call (\S+) (\{.*\})/.exec(user);
      return asked ? toolCallsReply({ name: asked[1] ?? "", arguments: asked[2] ?? "{}" }) : textReply("nothing asked");
    });
    dev = await sharedWranglerDev();
    await pushSharedSkill(dev, SKILL, {
      servers: {
        doomed: { url: `${doomed.origin}/mcp`, transport: "streamable-http", call_timeout_ms: 60_000 },
        slow: { url: `${fxBase}/mcp`, transport: "streamable-http", call_timeout_ms: SLOW_CALL_TIMEOUT_MS },
        garbled: { url: `${malformed.origin}/garbage`, transport: "streamable-http", call_timeout_ms: GARBLED_CALL_TIMEOUT_MS },
        notrpc: { url: `${malformed.origin}/not-jsonrpc`, transport: "streamable-http", call_timeout_ms: GARBLED_CALL_TIMEOUT_MS },
        broken: { url: `${malformed.origin}/garbage-always`, transport: "streamable-http", connect_timeout_ms: 3_000 },
        sessions: { url: `${fxBase}/mcp-stateful`, transport: "streamable-http" },
      },
      experts: [
        expert("doomed", ["sleep"]),
        expert("slow", ["sleep"]),
        expert("garbled", ["echo"]),
        expert("notrpc", ["echo"]),
        expert("broken", ["echo"]),
        expert("sessions", ["echo"]),
      ],
    });
    client = await connectMcpClient("v2-2025", `${dev.baseUrl}/s/${SKILL}/mcp`, { timeoutMs: 60_000 });
  });
  afterAll(async () => {
    await client?.close();
    await dev?.stop();
    await Promise.allSettled([fake?.close(), fixtures?.stop(), doomed?.stop(), malformed?.stop()]);
  });

  it("turns a downstream killed mid-call into an error naming the server, not a hang", async () => {
    const running = call("doomed", "sleep", { ms: 20_000 });
    running.catch(() => undefined);
    await waitFor(
      "the doomed server to receive the sleep call",
      async () => ((await readFixtureStats(doomed.origin)).calls.sleep === 1 ? true : undefined),
      15_000,
    );
    await doomed.stop();
    // Not a hang: the call ends with the closed connection's error, not the 20 s sleep's answer.
    const { result, text } = await running;
    expect(text).toMatch(/^tool said: .*downstream server "doomed"/is);
    expect(text).toContain('closed the connection while "sleep" was running');
    expect(text).not.toContain("slept");
    const { run, steps } = await recordOf(result);
    expect(run.outcome).toBe("ok");
    expect(steps[0]?.toolCalls).toMatchObject([{ name: "doomed__sleep", status: "error", error: expect.stringContaining('"doomed"') }]);
  });

  it("cuts a tool slower than the server's call_timeout_ms, naming the server and the timeout", async () => {
    const { result, text, elapsedMs } = await call("slow", "sleep", { ms: 8_000 });
    expect(text).toContain(`Tool "sleep" on downstream server "slow" did not answer within ${SLOW_CALL_TIMEOUT_MS} ms`);
    // The text names the timeout; only the clock shows the cut came at it, not at the 8 s answer.
    expect(elapsedMs).toBeLessThan(SLOW_CALL_TIMEOUT_MS + 4_000);
    const { steps } = await recordOf(result);
    expect(steps[0]?.toolCalls).toMatchObject([{ name: "slow__sleep", status: "error", error: expect.stringContaining(`${SLOW_CALL_TIMEOUT_MS} ms`) }]);
  });

  for (const server of ["garbled", "notrpc"] as const) {
    it(`reports a server answering a tool call with ${server === "garbled" ? "truncated JSON" : "JSON that is not JSON-RPC"}, naming it`, async () => {
      const { result, text, elapsedMs } = await call(server, "echo", { text: "hello" });
      expect(text).toMatch(new RegExp(`^tool said: .*downstream server "${server}"`, "is"));
      expect(text).not.toMatch(/tool said: hello/);
      expect(malformed.stats(server === "garbled" ? "/garbage" : "/not-jsonrpc").calls.echo).toBe(1);
      // Bounded by the call timeout at worst; the server's answer must not park the run.
      expect(elapsedMs).toBeLessThan(GARBLED_CALL_TIMEOUT_MS + 4_000);
      const { steps } = await recordOf(result);
      expect(steps[0]?.toolCalls).toMatchObject([{ name: `${server}__echo`, status: "error", error: expect.stringContaining(`"${server}"`) }]);
    });
  }

  it("reports a server whose handshake is garbage as unavailable, naming it", async () => {
    const { result, text } = await call("broken", "echo", { text: "hello" });
    expect(result.isError).toBe(true);
    expect(text).toContain('listing failed on "broken"');
    expect((await recordOf(result)).run.outcome).toBe("error");
  });

  it("re-initialises a downstream session that expired between two calls, transparently", async () => {
    const first = await call("sessions", "echo", { text: "before expiry" });
    expect(first.text).toMatch(/^tool said: before expiry/);
    const initialized = (await readFixtureStats(fxBase)).initialize;
    const expired = await fetch(`${fxBase}/sessions/expire`, { method: "POST" });
    expect(expired.status).toBe(204);
    const second = await call("sessions", "echo", { text: "after expiry" });
    expect(second.result.isError ?? false).toBe(false);
    expect(second.text).toMatch(/^tool said: after expiry/);
    const stats = await readFixtureStats(fxBase);
    // One new handshake for the second call; the call itself reached the server once.
    expect(stats.initialize).toBe(initialized + 1);
    expect(stats.calls.echo).toBe(2);
    expect((await recordOf(second.result)).run.outcome).toBe("ok");
  });
});
