import { abortAllDurableObjects, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { taskId as toTaskId } from "@modelcontextprotocol/ext-tasks/core";
import { describe, expect, it } from "vitest";
import type { UserProps } from "../../../src/auth/user-props";
import { gate, toResult, useCatalogWithScriptedModels } from "../../support/workers/scripted-model";
import { sessionOf } from "../../support/workers/session-helpers";
import { connectTasksV2, requestMeta } from "../../support/tasks-extension-client";
import { waitFor } from "../../support/wait-for";
import { askDocsCatalog, textOf } from "../expert-test-setup";
import { appFetchAs } from "../mcp-test-client";

const ann: UserProps = { userId: "dev-taskv2-ann", login: "ann", role: "member" };
const ben: UserProps = { userId: "dev-taskv2-ben", login: "ben", role: "member" };
const cid: UserProps = { userId: "dev-taskv2-cid", login: "cid", role: "member" };

const base = askDocsCatalog("default").skills.default;
const askDocs = base?.experts[0];
const catalog = {
  skills: {
    default: {
      ...base,
      // Every docs search waits for the user's approval: a task then waits in input_required.
      tool_policy: { requires_approval: ["docs__search_docs"] },
      experts: [
        { ...askDocs, task: "optional" },
        { ...askDocs, name: "only_task", task: "required" },
        { ...askDocs, name: "never_task" },
      ],
    },
  },
};

const URL = "https://team.example.com/mcp";
const as = (user: UserProps) => (input: string | globalThis.URL | Request, init?: RequestInit) => appFetchAs(user, input, init);

describe("expert calls as tasks of the 2026-07-28 Tasks extension (SEP-2663)", () => {
  const models = useCatalogWithScriptedModels(catalog);

  // First, like expert-tasks.test.ts: aborting the Durable Objects while other tests' objects are busy crashes workerd.
  it("a task a restart cut off fails, and tasks/get says its run was interrupted and can be retried", async () => {
    const model = models.play([{ text: "Must not run: the cut run may have called tools already." }]);
    const taskId = crypto.randomUUID();
    const runId = crypto.randomUUID();
    const now = Date.now();
    await runInDurableObject(sessionOf("default", cid), async (_instance, state) => {
      const request = { runId, skill: "default", expert: "ask_docs", args: { query: "survive a restart" }, user: cid };
      state.storage.sql.exec(
        `INSERT INTO tasks (task_id, run_id, status, status_message, request, structured_expected, created_at, updated_at, expires_at, attempts, generation)
         VALUES (?, ?, 'working', 'Running.', ?, 0, ?, ?, ?, 1, 'v2')`,
        taskId,
        runId,
        JSON.stringify(request),
        now,
        now,
        now + 3_600_000,
      );
      await state.storage.setAlarm(now + 3_600_000);
    });
    await abortAllDurableObjects();
    expect(await runDurableObjectAlarm(sessionOf("default", cid))).toBe(true);
    expect(model.doGenerateCalls).toHaveLength(0);
    const { client, raw } = await connectTasksV2(URL, as(cid));
    try {
      const got = await raw("tasks/get", { taskId, _meta: requestMeta(true) });
      expect(got.result).toMatchObject({ status: "failed", error: { message: expect.stringContaining(`Run ${runId} was interrupted: the server restarted`) } });
      expect(JSON.stringify(got.result)).toContain("call the tool again");
    } finally {
      await client.close();
    }
  });

  it("advertises the extension; a task is created at once, polled, waits for the user's approval, is answered through tasks/update and completes", async () => {
    const step = gate();
    models.play([
      { calls: [{ name: "docs__search_docs", input: { query: "budget" } }] },
      async () => {
        await step.opened;
        return toResult({ text: "Approved and answered." });
      },
    ]);
    const shown: string[] = [];
    const { client, tasks } = await connectTasksV2(URL, as(ann), {
      onInputRequest: async (request) => {
        shown.push(String(request.params?.message));
        return { action: "accept", content: { approve: true } } as never;
      },
    });
    try {
      expect(client.getServerCapabilities()?.extensions).toEqual({ "io.modelcontextprotocol/tasks": {} });
      expect(client.getServerCapabilities()?.tasks).toBeUndefined();
      const execution = await tasks.callTool("ask_docs", { query: "What do budgets do?" });
      expect(execution.kind).toBe("task");
      const taskId = execution.handle?.taskId ?? toTaskId("none");
      // After the approval the run goes on and waits on the gate: the task works again.
      const working = await waitFor(
        "the resumed task to work on",
        async () => {
          const view = await tasks.task(taskId).snapshot();
          return view.status === "working" && shown.length === 1 ? view : undefined;
        },
        5_000,
        20,
      );
      expect(working.suggestedPollIntervalMs).toBe(1_000);
      expect(shown[0]).toContain("docs__search_docs");
      expect(shown[0]).toContain('{"query":"budget"}');
      step.open();
      const { outcome } = await execution.settle();
      expect(outcome.status).toBe("completed");
      if (outcome.status !== "completed") return;
      expect(textOf(outcome.result as { content?: unknown })).toMatch(/^Approved and answered\./);
      // The resumed run's trace opens with the user's decision.
      const [resumed] = await sessionOf("default", ann).recentRuns(1);
      const [decided] = await sessionOf("default", ann).steps(resumed?.id ?? "");
      expect(decided).toMatchObject({ finishReason: "approval", toolCalls: [{ name: "docs__search_docs", decision: { outcome: "approved", by: "user" } }] });
    } finally {
      await tasks.close();
      await client.close();
    }
  });

  it("the wire: CreateTaskResult and DetailedTask fields, input_required with its inputRequests, tasks/update and tasks/cancel acks", async () => {
    models.play([{ calls: [{ name: "docs__search_docs", input: { query: "wire" } }] }, { text: "Declined, answered anyway." }]);
    const { client, raw } = await connectTasksV2(URL, as(ann));
    try {
      const created = await raw("tools/call", { name: "ask_docs", arguments: { query: "wire?" }, _meta: requestMeta(true) });
      expect(created.result).toMatchObject({ resultType: "task", status: "working", ttlMs: 3_600_000, pollIntervalMs: 1_000 });
      expect(created.result).not.toHaveProperty("ttl");
      expect(created.result).not.toHaveProperty("requestState");
      const taskId = String(created.result?.taskId);
      const get = () => raw("tasks/get", { taskId, _meta: requestMeta(true) });
      const waiting = await waitFor(
        "input_required",
        async () => ((await get()).result?.status === "input_required" ? (await get()).result : undefined),
        5_000,
        20,
      );
      expect(waiting).toMatchObject({ resultType: "complete", statusMessage: "Waiting for the user's approval." });
      const requests = waiting?.inputRequests as Record<string, { method: string; params: { mode: string; message: string; requestedSchema: unknown } }>;
      const [key, request] = Object.entries(requests)[0] ?? [];
      expect(request).toMatchObject({
        method: "elicitation/create",
        params: { mode: "form", requestedSchema: { properties: { approve: { type: "boolean" } } } },
      });
      // A reply to a key the task does not wait for changes nothing, and is acknowledged.
      expect(
        (await raw("tasks/update", { taskId, inputResponses: { other: { action: "accept", content: { approve: true } } }, _meta: requestMeta(true) })).result,
      ).toEqual({
        resultType: "complete",
        _meta: expect.any(Object),
      });
      expect((await get()).result?.status).toBe("input_required");
      const updated = await raw("tasks/update", { taskId, inputResponses: { [String(key)]: { action: "decline" } }, _meta: requestMeta(true) });
      expect(updated.result?.resultType).toBe("complete");
      const done = await waitFor("completed", async () => ((await get()).result?.status === "completed" ? (await get()).result : undefined), 5_000, 20);
      const result = done?.result as { resultType: string; content: unknown; _meta?: Record<string, unknown> };
      expect(result.resultType).toBe("complete");
      expect(textOf(result)).toMatch(/^Declined, answered anyway\./);
      expect(result._meta?.["io.modelcontextprotocol/related-task"]).toBeUndefined();
      const [resumed] = await sessionOf("default", ann).recentRuns(1);
      const [decided] = await sessionOf("default", ann).steps(resumed?.id ?? "");
      expect(decided).toMatchObject({ toolCalls: [{ decision: { outcome: "declined", by: "user" } }] });
      // Cancelling an ended task is acknowledged and changes nothing (-32602 is for unknown ids only).
      expect((await raw("tasks/cancel", { taskId, _meta: requestMeta(true) })).result?.resultType).toBe("complete");
      expect((await get()).result?.status).toBe("completed");
    } finally {
      await client.close();
    }
  });

  it("a cancelled task stops its run; another user's task id and an unknown one are not found", async () => {
    const started = gate();
    models.play([
      async (options) => {
        started.open();
        await new Promise((_resolve, reject) => options.abortSignal?.addEventListener("abort", () => reject(options.abortSignal?.reason), { once: true }));
        return toResult({ text: "never" });
      },
    ]);
    const { client, tasks } = await connectTasksV2(URL, as(ann));
    const other = await connectTasksV2(URL, as(ben));
    try {
      const execution = await tasks.callTool("ask_docs", { query: "A long question" });
      const taskId = execution.handle?.taskId ?? toTaskId("none");
      await started.opened;
      for (const method of ["tasks/get", "tasks/cancel", "tasks/update"]) {
        const answer = await other.raw(method, { taskId, inputResponses: {}, _meta: requestMeta(true) });
        expect(answer.error).toMatchObject({ code: -32602, message: expect.stringContaining("Task not found") });
      }
      expect((await other.raw("tasks/get", { taskId: "no-such-task", _meta: requestMeta(true) })).error?.code).toBe(-32602);
      await execution.cancel();
      expect((await tasks.task(taskId).snapshot()).status).toBe("cancelled");
      const run = await waitFor(
        "the cancelled run's record",
        async () => (await sessionOf("default", ann).recentRuns(1)).find((candidate) => candidate.outcome !== "running"),
        5_000,
        20,
      );
      expect(run.outcome).toBe("cancelled");
    } finally {
      await tasks.close();
      await client.close();
      await other.tasks.close();
      await other.client.close();
    }
  });

  it("without the extension declared: tasks/* are -32021 (HTTP 400), a required expert too, an optional one runs as a plain call; removed methods are -32601", async () => {
    models.play([{ text: "plain answer" }]);
    const { client, raw } = await connectTasksV2(URL, as(ann));
    try {
      for (const method of ["tasks/get", "tasks/update", "tasks/cancel"]) {
        const answer = await raw(method, { taskId: "t1", inputResponses: {}, _meta: requestMeta(false) });
        expect(answer.status).toBe(400);
        expect(answer.error).toMatchObject({ code: -32021, data: { requiredCapabilities: { extensions: { "io.modelcontextprotocol/tasks": {} } } } });
      }
      const required = await raw("tools/call", { name: "only_task", arguments: { query: "q" }, _meta: requestMeta(false) });
      expect(required.status).toBe(400);
      expect(required.error?.code).toBe(-32021);
      const plain = await raw("tools/call", { name: "ask_docs", arguments: { query: "q" }, _meta: requestMeta(false) });
      expect(plain.result).toMatchObject({ resultType: "complete" });
      expect(textOf(plain.result ?? {})).toMatch(/^plain answer/);
      for (const method of ["tasks/list", "tasks/result"]) {
        expect((await raw(method, { taskId: "t1", _meta: requestMeta(true) })).error?.code).toBe(-32601);
      }
      // SEP-2243 routing headers must match the body.
      const mismatch = await raw("tasks/get", { taskId: "t1", _meta: requestMeta(true) }, { "mcp-name": "t2" });
      expect(mismatch.status).toBe(400);
      expect(mismatch.error?.code).toBe(-32020);
      // Bad arguments are refused before a task exists.
      expect((await raw("tools/call", { name: "ask_docs", arguments: { query: 5 }, _meta: requestMeta(true) })).error).toMatchObject({
        code: -32602,
        message: expect.stringContaining("query"),
      });
    } finally {
      await client.close();
    }
  });
});
