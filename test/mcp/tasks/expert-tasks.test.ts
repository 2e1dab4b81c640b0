import { abortAllDurableObjects, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { createTaskSessionFromClient, type TaskEnabledSession } from "@modelcontextprotocol/ext-tasks/client";
import { taskId as toTaskId } from "@modelcontextprotocol/ext-tasks/core";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import type { UserProps } from "../../../src/auth/user-props";
import { RELATED_TASK } from "../../../src/mcp/tasks/expert-tasks";
import { gate, toResult, useCatalogWithScriptedModels } from "../../support/workers/scripted-model";
import { sessionOf } from "../../support/workers/session-helpers";
import { waitFor } from "../../support/wait-for";
import { askDocsCatalog, textOf } from "../expert-test-setup";
import { appFetchAs } from "../mcp-test-client";

const ann: UserProps = { userId: "dev-task-ann", login: "ann", role: "member" };
const ben: UserProps = { userId: "dev-task-ben", login: "ben", role: "member" };
const cid: UserProps = { userId: "dev-task-cid", login: "cid", role: "member" };

const base = askDocsCatalog("default").skills.default;
const askDocs = base?.experts[0];
const catalog = {
  skills: {
    default: {
      ...base,
      experts: [
        { ...askDocs, task: "optional" },
        { ...askDocs, name: "only_task", task: "required" },
        { ...askDocs, name: "never_task" },
      ],
    },
  },
};

const URL_2025 = "https://team.example.com/mcp";

async function connect(user: UserProps): Promise<{ client: Client; tasks: TaskEnabledSession }> {
  const client = new Client({ name: "tasks-test", version: "0.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(URL_2025), { fetch: (input, init) => appFetchAs(user, input, init) }));
  return { client, tasks: createTaskSessionFromClient(client, { endpointId: `tasks-test-${user.login}` }) };
}

/** One JSON-RPC request as a 2025-11-25 client sends it after the handshake. */
async function rpc(
  user: UserProps,
  method: string,
  params: Record<string, unknown>,
): Promise<{ result?: Record<string, unknown>; error?: { code: number; message: string } }> {
  const response = await appFetchAs(user, URL_2025, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-11-25" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 7, method, params }),
  });
  const text = await response.text();
  // The SDK answers plain calls as an SSE stream; task requests are answered as JSON.
  const json = text.startsWith("{")
    ? text
    : (text
        .split("\n")
        .find((line) => line.startsWith("data: {"))
        ?.slice(6) ?? "{}");
  return JSON.parse(json) as { result?: Record<string, unknown>; error?: { code: number; message: string } };
}

describe("expert calls as MCP Tasks (2025-11-25)", () => {
  const models = useCatalogWithScriptedModels(catalog);

  it("a task a restart cut off fails, naming its run as interrupted, and is not run again behind the client's back", async () => {
    const model = models.play([{ text: "Must not run: the cut run may have called tools already." }]);
    const taskId = crypto.randomUUID();
    const firstRun = crypto.randomUUID();
    const now = Date.now();
    // The rows an instance leaves behind when it dies mid-task: the task working, its run running.
    await runInDurableObject(sessionOf("default", cid), async (_instance, state) => {
      const request = { runId: firstRun, skill: "default", expert: "ask_docs", args: { query: "survive a restart" }, user: cid };
      state.storage.sql.exec(
        `INSERT INTO tasks (task_id, run_id, status, status_message, request, structured_expected, created_at, updated_at, expires_at, attempts)
         VALUES (?, ?, 'working', 'Running.', ?, 0, ?, ?, ?, 1)`,
        taskId,
        firstRun,
        JSON.stringify(request),
        now,
        now,
        now + 3_600_000,
      );
      state.storage.sql.exec(
        `INSERT INTO runs (id, skill, expert, user_id, thread_id, catalog_version, provider, model, outcome, started_at)
         VALUES (?, 'default', 'ask_docs', ?, NULL, 1, 'openai-compatible', NULL, 'running', ?)`,
        firstRun,
        cid.userId,
        now,
      );
      await state.storage.setAlarm(now + 3_600_000);
    });
    await abortAllDurableObjects();
    expect(await runDurableObjectAlarm(sessionOf("default", cid))).toBe(true);

    const interrupted = `Run ${firstRun} was interrupted: the server restarted during the run`;
    expect(await sessionOf("default", cid).task(taskId)).toMatchObject({
      status: "failed",
      runId: firstRun,
      statusMessage: expect.stringContaining(interrupted),
    });
    expect(await sessionOf("default", cid).run(firstRun)).toMatchObject({ outcome: "interrupted", error: expect.stringContaining("restarted") });
    expect(model.doGenerateCalls).toHaveLength(0);
    // The client sees it through tasks/get and tasks/result: the same tool error a resumed call gets.
    expect((await rpc(cid, "tasks/get", { taskId })).result).toMatchObject({ status: "failed", statusMessage: expect.stringContaining(interrupted) });
    const result = (await rpc(cid, "tasks/result", { taskId })).result;
    expect(result).toMatchObject({ isError: true, _meta: { [RELATED_TASK]: { taskId } } });
    expect(textOf(result as { content?: unknown })).toContain(interrupted);
    expect(textOf(result as { content?: unknown })).toContain("call the tool again");
  });

  it("runs as a task: created at once, polled with progress to completion, listed, result fetched", async () => {
    const step = gate();
    models.play([
      { calls: [{ name: "docs__search_docs", input: { query: "budget" } }] },
      async () => {
        await step.opened;
        return toResult({ text: "The task's answer." });
      },
    ]);
    const { client, tasks } = await connect(ann);
    try {
      const listed = await client.listTools();
      expect(Object.fromEntries(listed.tools.map((tool) => [tool.name, tool.execution?.taskSupport]))).toEqual({
        ask_docs: "optional",
        only_task: "required",
        never_task: undefined,
      });
      expect(client.getServerCapabilities()?.tasks).toMatchObject({ list: {}, cancel: {}, requests: { tools: { call: {} } } });

      const execution = await tasks.callTool("ask_docs", { query: "What do budgets do?" }, { task: { preference: "prefer" } });
      expect(execution.kind).toBe("task");
      const taskId = execution.handle?.taskId ?? toTaskId("none");
      // The model waits on the gate in step 2, so the task is still working: its status names step 1.
      const working = await waitFor(
        "the task to report its first step",
        async () => {
          const view = await tasks.task(taskId).snapshot();
          return view.statusMessage?.startsWith("Step 1 of at most") ? view : undefined;
        },
        5_000,
        20,
      );
      expect(working.status).toBe("working");
      expect((await tasks.listTasks()).tasks.map((task) => [task.taskId, task.status])).toContainEqual([taskId, "working"]);

      // tasks/result on a working task waits for it to end (the spec's blocking read).
      const blockingResult = rpc(ann, "tasks/result", { taskId });
      step.open();
      const { outcome } = await execution.settle();
      expect(outcome.status).toBe("completed");
      if (outcome.status !== "completed") return;
      const result = outcome.result as { content: Array<{ type: string; uri?: string }>; _meta?: Record<string, unknown> };
      expect(textOf(result)).toMatch(/^The task's answer\./);
      expect(result._meta?.[RELATED_TASK]).toEqual({ taskId });
      expect(result.content.at(-1)).toMatchObject({ type: "resource_link" });
      expect((await tasks.task(taskId).snapshot()).status).toBe("completed");
      const blocked = await blockingResult;
      expect(textOf(blocked.result ?? {})).toMatch(/^The task's answer\./);
      expect(blocked.result?._meta).toMatchObject({ [RELATED_TASK]: { taskId } });
      expect((await tasks.listTasks()).tasks.map((task) => [task.taskId, task.status])).toContainEqual([taskId, "completed"]);

      // Another user's session has no such task: not found, not listed.
      expect(await rpc(ben, "tasks/get", { taskId })).toMatchObject({ error: { code: -32602, message: expect.stringContaining("Task not found") } });
      expect(await rpc(ben, "tasks/result", { taskId })).toMatchObject({ error: { code: -32602 } });
      expect(await rpc(ben, "tasks/cancel", { taskId })).toMatchObject({ error: { code: -32602 } });
      const bensTasks = (await rpc(ben, "tasks/list", {})).result?.tasks as Array<{ taskId: string }> | undefined;
      expect(bensTasks?.map((task) => task.taskId)).toEqual([]);
    } finally {
      await tasks.close();
      await client.close();
    }
  });

  it("a cancelled task stops its run, which is recorded as cancelled", async () => {
    const started = gate();
    models.play([
      async (options) => {
        started.open();
        // Holds the step until the run is aborted.
        await new Promise((_resolve, reject) => options.abortSignal?.addEventListener("abort", () => reject(options.abortSignal?.reason), { once: true }));
        return toResult({ text: "never" });
      },
    ]);
    const { client, tasks } = await connect(ann);
    try {
      const execution = await tasks.callTool("ask_docs", { query: "A long question" }, { task: { preference: "prefer" } });
      const taskId = execution.handle?.taskId ?? toTaskId("none");
      await started.opened;
      await execution.cancel();
      expect((await tasks.task(taskId).snapshot()).status).toBe("cancelled");
      const run = await waitFor(
        "the cancelled run's record",
        async () => (await sessionOf("default", ann).recentRuns(1)).find((candidate) => candidate.outcome !== "running"),
        5_000,
        20,
      );
      expect(run.outcome).toBe("cancelled");
      // An ended task cannot be cancelled again.
      expect(await rpc(ann, "tasks/cancel", { taskId })).toMatchObject({ error: { code: -32602, message: expect.stringContaining("already cancelled") } });
    } finally {
      await tasks.close();
      await client.close();
    }
  });

  it("2026-07-28 clients get Tasks through the extension, not the 2025-11-25 capability; a plain call of a required expert is -32021", async () => {
    models.play([{ text: "modern plain" }]);
    const client = new Client({ name: "tasks-test-2026", version: "0.0.0" }, { versionNegotiation: { mode: { pin: "2026-07-28" } } });
    await client.connect(new StreamableHTTPClientTransport(new URL(URL_2025), { fetch: (input, init) => appFetchAs(ann, input, init) }));
    try {
      expect(client.getServerCapabilities()?.tasks).toBeUndefined();
      expect(client.getServerCapabilities()?.extensions).toEqual({ "io.modelcontextprotocol/tasks": {} });
      const listed = await client.listTools();
      expect(listed.tools.map((tool) => tool.execution)).toEqual([undefined, undefined, undefined]);
      // An optional expert from a client that did not declare the extension runs as a plain call.
      expect(textOf(await client.callTool({ name: "ask_docs", arguments: { query: "q" } }))).toMatch(/^modern plain/);
      // A required one cannot (SEP-2663 "Required Capabilities"): test/mcp/tasks/expert-tasks-extension.test.ts.
      await expect(client.callTool({ name: "only_task", arguments: { query: "q" } })).rejects.toMatchObject({ code: -32021 });
    } finally {
      await client.close();
    }
  });

  it("an expert's task support is enforced: required refuses a plain call, forbidden a task call", async () => {
    models.play([{ text: "plain" }]);
    expect(await rpc(ann, "tools/call", { name: "only_task", arguments: { query: "q" } })).toMatchObject({
      error: { code: -32601, message: expect.stringContaining("runs only as a task") },
    });
    expect(await rpc(ann, "tools/call", { name: "never_task", arguments: { query: "q" }, task: {} })).toMatchObject({
      error: { code: -32601, message: expect.stringContaining("does not run as a task") },
    });
    // Bad arguments are refused before a task exists.
    expect(await rpc(ann, "tools/call", { name: "ask_docs", arguments: { query: 5 }, task: {} })).toMatchObject({
      error: { code: -32602, message: expect.stringContaining("query") },
    });
    // A plain call of an optional expert is today's call.
    const plain = await rpc(ann, "tools/call", { name: "ask_docs", arguments: { query: "q" } });
    expect(textOf(plain.result ?? {})).toMatch(/^plain/);
  });

  it("a task's run joins the caller's trace from the call's _meta.traceparent (SEP-414)", async () => {
    models.play([{ text: "traced task" }]);
    const traceId = "5bf92f3577b34da6a3ce929d0e0e4737";
    const started = await rpc(ann, "tools/call", {
      name: "ask_docs",
      arguments: { query: "q" },
      task: {},
      _meta: { traceparent: `00-${traceId}-00f067aa0ba902b7-01` },
    });
    const { taskId } = z.object({ task: z.object({ taskId: z.string() }) }).parse(started.result).task;
    const done = await rpc(ann, "tasks/result", { taskId });
    expect(done.result?._meta).toMatchObject({ "slipsnisse.dev/trace": { traceId } });
  });
});
