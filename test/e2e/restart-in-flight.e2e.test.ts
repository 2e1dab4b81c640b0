import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resumeRetryMs } from "../../src/mcp/delivery/resume-timing";
import { waitFor } from "../support/wait-for";
import { type EchoExpertStack, fakeModelExpert, startEchoExpertStack } from "./harness/echo-expert-stack";
import { textReply } from "./harness/fake-openai-server";
import type { WranglerDev } from "./harness/wrangler-dev";
import { connectMcpClient, type McpTestClient, resultText, type ToolCallResult } from "./harness/mcp-clients";

/** The expert's budget: every cut call must end within it (and a few seconds), not at the client's 60 s timeout. */
const BUDGET_MS = 20_000;
const SLACK_MS = 5_000;
/** The result `_meta` key naming the run (src/mcp/delivery/expert-tool-result.ts META_RUN). */
const META_RUN = "slipsnisse.dev/run";
const INTERRUPTED = /Run ([0-9a-f-]{36}) was interrupted: the server restarted during the run/;

/**
 * Issue 40.1: calls in flight when the server restarts (wrangler dev's process group ended with
 * SIGTERM, as a Ctrl-C of `npm start`, a deploy or an eviction ends the Durable Object, and
 * started again with the same persisted state). The model hangs until the restart, so every run
 * is cut. Real SDK clients (v1 and v2, 2025-11-25 Streamable HTTP, default reconnection options
 * and the SDKs' 60 s request timeout) must get the run's outcome, a tool error naming the run,
 * within the expert's budget: the priming event's `retry` makes their two reconnection attempts
 * span the restart, and the resume is answered from the stream's durable record. Legacy SSE
 * clients (SDK v1 and v2) reconnect on their own and get the same on their new connection. A manual
 * resume with Last-Event-ID gets the same (not 404); a task of a cut run fails saying so.
 */
describe("calls in flight when the server restarts", () => {
  let stack: EchoExpertStack;
  let release = () => {};
  /** The server after the restart (the stack's stop ends only the one it started). */
  let restartedDev: WranglerDev | undefined;

  beforeAll(async () => {
    stack = await startEchoExpertStack({
      tag: "restart-in-flight",
      wrangler: { readyTimeoutMs: 90_000 },
      experts: (model) => [
        fakeModelExpert(model, {
          name: "slow_expert",
          description: "Thinks until the server restarts.",
          internal_tools: { fx: ["echo"] },
          budget: { max_steps: 3, timeout_ms: BUDGET_MS, max_output_tokens: 512, max_tool_calls: 2, max_tool_result_bytes: 4_096 },
          task: "optional",
        }),
      ],
    });
  }, 120_000);
  afterAll(async () => {
    release();
    await restartedDev?.stop();
    await stack?.stop();
  });

  it("each cut call ends with a tool error naming its run within the budget; a manual resume gets it too (not 404); a cut task fails", async () => {
    const restarted = new Promise<void>((resolve) => (release = resolve));
    stack.fake.reset(async () => {
      await restarted;
      return textReply("answered by a run that was not cut");
    });
    const url = `${stack.dev.baseUrl}/mcp`;
    // Legacy HTTP+SSE clients of both SDKs too: their EventSource reconnects after the restart
    // (without Last-Event-ID) and the new connection answers the cut call by its request id. Under
    // AUTH=none the header is not checked; it stands for each client's own OAuth token, which
    // tells the two connections of one user apart (with the same credential neither is answered).
    const kinds = ["v1-http", "v1-http", "v2-2025", "v2-2025", "v1-sse", "v2-sse"] as const;
    const clients: McpTestClient[] = await Promise.all(
      kinds.map((kind) =>
        kind.endsWith("-sse") ? connectMcpClient(kind, stack.sseUrl, { headers: { authorization: `Bearer e2e-${kind}-token` } }) : connectMcpClient(kind, url),
      ),
    );
    try {
      const calls = clients.map(async (client, index) => {
        const startedAt = Date.now();
        const result = await client.callTool("slow_expert", { query: `question ${index}` }).catch((error: unknown) => error);
        return { kind: client.kind, result, endedAfterMs: Date.now() - startedAt };
      });
      const manual = await startRawCall(url);
      const taskId = await startTask(url);
      // Every run is in flight (its model call hangs) before the restart.
      await waitFor("eight runs waiting on the model", () => (stack.fake.requests.length >= 8 ? true : undefined), 30_000);

      const cutAt = Date.now();
      restartedDev = await restartOf(stack);
      const downMs = Date.now() - cutAt;
      release();

      // A resume of the raw call after the restart: the run's outcome for the original request id, at once.
      const resumed = await fetch(url, { headers: { ...HEADERS, "last-event-id": manual.lastEventId } });
      expect(resumed.status).toBe(200);
      const answer = lastMessage(await resumed.text());
      expect(answer).toMatchObject({ id: manual.requestId, result: { isError: true } });
      const text = JSON.stringify(answer);
      expect(text).toMatch(INTERRUPTED);
      expect((answer.result as { _meta?: Record<string, unknown> })._meta?.[META_RUN]).toBe(INTERRUPTED.exec(text)?.[1]);

      // The task of a cut run failed, saying so, as tasks/get and tasks/result show it.
      const task = await waitFor(
        "the cut task to fail",
        async () => {
          const got = await rpc(url, "tasks/get", { taskId });
          return got.result?.status === "failed" ? got.result : undefined;
        },
        10_000,
      );
      expect(String(task.statusMessage)).toMatch(INTERRUPTED);
      const taskResult = await rpc(url, "tasks/result", { taskId });
      expect(taskResult.result).toMatchObject({ isError: true });
      expect(JSON.stringify(taskResult.result)).toMatch(INTERRUPTED);

      const ended = await Promise.all(calls);
      for (const { kind, result, endedAfterMs } of ended) {
        expect(result, `${kind} got ${String(result)} after ${endedAfterMs} ms (server down ${downMs} ms)`).toMatchObject({ isError: true });
        const call = result as ToolCallResult;
        const runId = INTERRUPTED.exec(resultText(call))?.[1];
        expect(runId, resultText(call)).toBeDefined();
        expect(call._meta?.[META_RUN]).toBe(runId);
        expect(resultText(call)).toContain("call the tool again");
        // The SDKs' own timeout is 60 s; the server's retry spans the restart within the budget.
        expect(endedAfterMs, `${kind}: server down ${downMs} ms, retry ${resumeRetryMs(BUDGET_MS)} ms`).toBeLessThan(BUDGET_MS + SLACK_MS);
      }
    } finally {
      release();
      await Promise.allSettled(clients.map((client) => client.close()));
    }
  }, 120_000);
});

const HEADERS = { accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-11-25" };

async function restartOf(stack: EchoExpertStack) {
  if (!stack.dev.restart) throw new Error("this server cannot be restarted");
  return stack.dev.restart();
}

/** A 2025-11-25 tools/call on a raw stream, read until its priming event; the restart cuts the rest. */
async function startRawCall(url: string): Promise<{ requestId: string; lastEventId: string }> {
  const requestId = `raw-${crypto.randomUUID()}`;
  const response = await fetch(url, {
    method: "POST",
    headers: { ...HEADERS, "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: requestId, method: "tools/call", params: { name: "slow_expert", arguments: { query: "raw" } } }),
  });
  const reader = response.body?.getReader();
  if (!reader) throw new Error(`no stream: ${response.status}`);
  const decoder = new TextDecoder();
  let seen = "";
  for (let read = 0; read < 100; read++) {
    const { value, done } = await reader.read();
    if (done) break;
    seen += decoder.decode(value, { stream: true });
    const id = /^id: (.+)$/m.exec(seen)?.[1];
    // Left unread (not cancelled): the connection stays open until the restart cuts it.
    if (id) return { requestId, lastEventId: id.trim() };
  }
  throw new Error(`no priming event: ${seen}`);
}

async function startTask(url: string): Promise<string> {
  const created = await rpc(url, "tools/call", { name: "slow_expert", arguments: { query: "as a task" }, task: {} });
  const taskId = (created.result?.task as { taskId?: string } | undefined)?.taskId;
  if (!taskId) throw new Error(`no task: ${JSON.stringify(created)}`);
  return taskId;
}

async function rpc(url: string, method: string, params: Record<string, unknown>): Promise<{ result?: Record<string, unknown>; error?: unknown }> {
  const response = await fetch(url, {
    method: "POST",
    headers: { ...HEADERS, "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  const text = await response.text();
  return text.startsWith("{") ? JSON.parse(text) : lastMessage(text);
}

/** The last JSON-RPC message of an SSE body. */
function lastMessage(sse: string): { id?: unknown; result?: Record<string, unknown>; error?: unknown } {
  const data = sse
    .split("\n")
    .filter((line) => line.startsWith("data: {"))
    .at(-1);
  return data === undefined ? {} : JSON.parse(data.slice(6));
}
