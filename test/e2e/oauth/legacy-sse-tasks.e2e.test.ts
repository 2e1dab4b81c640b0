import { Client, SSEClientTransport } from "@modelcontextprotocol/client";
import { createTaskSessionFromClient } from "@modelcontextprotocol/ext-tasks/client";
import { taskId as toTaskId } from "@modelcontextprotocol/ext-tasks/core";
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { SSEClientTransport as SSEClientTransportV1 } from "@modelcontextprotocol/sdk/client/sse.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readTaskStream } from "../harness/task-stream";
import { waitFor } from "../../support/wait-for";
import { type EchoExpertStack, startEchoExpertStack, echoTaskExpert, holdModelAnswer } from "../harness/echo-expert-stack";
import { bearer, signInAs, type OAuthSession } from "../harness/oauth-sign-in";
import { sharedDevTeamServer, type DevTeamServer } from "./dev-team-server";

const RELATED_TASK = "io.modelcontextprotocol/related-task";

/**
 * MCP Tasks (2025-11-25) over the legacy HTTP+SSE transport (2024-11-05) through `wrangler dev`
 * with OAuth on: the SDK v2 client driven by `@modelcontextprotocol/ext-tasks` and the SDK v1
 * client's experimental tasks, alice and bob signed in. Alice's task runs in her session and is
 * polled to completion over her SSE connection; bob, on his own connection, gets "not found" for
 * her task id and does not see it listed.
 */
describe("expert calls as MCP Tasks over legacy SSE", () => {
  let server: DevTeamServer;
  let stack: EchoExpertStack;
  let alice: OAuthSession;
  let bob: OAuthSession;
  let release = () => {};

  beforeAll(async () => {
    server = await sharedDevTeamServer();
    stack = await startEchoExpertStack({
      tag: "legacy-sse-tasks",
      onServer: { dev: server.dev, skill: "legacy-sse-tasks" },
      adminHeaders: bearer({ accessToken: server.adminToken }),
      experts: (model) => [echoTaskExpert(model)],
    });
    [alice, bob] = await Promise.all([signInAs(server.dev.baseUrl, "alice"), signInAs(server.dev.baseUrl, "bob")]);
  }, 120_000);
  afterAll(async () => {
    release();
    await stack?.stop();
    await server?.stop();
  });

  /** The model asks for one echo, then answers once the test releases it. */
  function holdSecondReply(): void {
    release = holdModelAnswer(stack.fake, "sse-task-token");
  }

  async function connectV2(session: OAuthSession) {
    const client = new Client({ name: "slipsnisse-e2e-sse-tasks", version: "0.0.0" });
    // Every notification the connection carries (ext-tasks chains its own handler after this one).
    const notes: Array<{ method: string; params?: Record<string, unknown> }> = [];
    client.fallbackNotificationHandler = async (notification) => {
      notes.push(notification as (typeof notes)[number]);
    };
    await client.connect(new SSEClientTransport(new URL(stack.sseUrl), { requestInit: { headers: bearer(session) } }));
    return { client, notes, tasks: createTaskSessionFromClient(client, { endpointId: `slipsnisse-e2e-sse-${session.accessToken.slice(0, 6)}` }) };
  }

  it("a task is created at once, polled with progress to completion and its result fetched; another user's connection finds none of it", async () => {
    holdSecondReply();
    const owner = await connectV2(alice);
    const other = await connectV2(bob);
    try {
      expect(owner.client.getServerCapabilities()?.tasks).toMatchObject({ list: {}, cancel: {}, requests: { tools: { call: {} } } });
      expect((await owner.client.listTools()).tools[0]?.execution).toEqual({ taskSupport: "optional" });
      const execution = await owner.tasks.callTool("echo_expert", { query: "run me over sse" }, { task: { preference: "prefer" } });
      expect(execution.kind).toBe("task");
      const taskId = execution.handle?.taskId ?? toTaskId("none");
      const working = await waitFor(
        "the task to report its first step",
        async () => {
          const view = await owner.tasks.task(taskId).snapshot();
          return view.statusMessage?.startsWith("Step 1 of at most") ? view : undefined;
        },
        15_000,
        100,
      );
      expect(working.status).toBe("working");

      // Bob's own connection: alice's task is not in his session.
      const foreign = await other.tasks
        .task(taskId)
        .snapshot()
        .then(
          () => "found",
          (error: unknown) => String(error),
        );
      expect(foreign).toMatch(/not found/i);
      expect((await other.tasks.listTasks()).tasks.map((task) => task.taskId)).not.toContain(taskId);

      release();
      const { outcome } = await execution.settle();
      expect(outcome.status).toBe("completed");
      if (outcome.status !== "completed") return;
      const result = outcome.result as { content: Array<{ type: string; text?: string }>; _meta?: Record<string, unknown> };
      expect(result.content[0]?.text).toContain("downstream said: sse-task-token");
      expect(result._meta?.[RELATED_TASK]).toEqual({ taskId });
      expect((await owner.tasks.listTasks()).tasks.map((task) => [task.taskId, task.status])).toContainEqual([taskId, "completed"]);
      // The connection has a stream: the task's end came as notifications/tasks/status too, once.
      const statusNotes = () => owner.notes.filter((note) => note.method === "notifications/tasks/status" && note.params?.taskId === taskId);
      await waitFor("the completed status notification", () => (statusNotes().some((note) => note.params?.status === "completed") ? true : undefined), 10_000);
      expect(statusNotes().map((note) => note.params?.status)).toEqual(["completed"]);
      expect(statusNotes()[0]?.params).toMatchObject({ taskId, status: "completed", ttl: expect.any(Number), pollInterval: 1_000 });
      // Its run was announced as a plain call's is.
      expect(owner.notes.some((note) => note.method === "notifications/resources/list_changed")).toBe(true);
      // Bob's connection heard nothing of alice's task.
      expect(JSON.stringify(other.notes)).not.toContain(taskId);
    } finally {
      release();
      await Promise.allSettled([owner.tasks.close(), owner.client.close(), other.tasks.close(), other.client.close()]);
    }
  }, 60_000);

  it("serves the SDK v1 client's experimental tasks over SSE, and cancels a running task", async () => {
    holdSecondReply();
    const client = new ClientV1({ name: "slipsnisse-e2e-sse-tasks-v1", version: "0.0.0" });
    await client.connect(new SSEClientTransportV1(new URL(stack.sseUrl), { requestInit: { headers: bearer(alice) } }));
    try {
      const { seen, text } = await readTaskStream(
        client.experimental.tasks.callToolStream({ name: "echo_expert", arguments: { query: "v1 over sse" } }, undefined, {
          task: { ttl: 60_000 },
        }),
        () => release(),
      );
      expect(seen[0]).toBe("taskCreated");
      expect(seen.at(-1)).toBe("result");
      expect(text).toContain("downstream said: sse-task-token");

      // A second task, held mid-run, cancelled over the same connection.
      holdSecondReply();
      const created = await client.experimental.tasks.callToolStream({ name: "echo_expert", arguments: { query: "cancel me" } }, undefined, {
        task: { ttl: 60_000 },
      });
      let taskId = "";
      for await (const message of created) {
        if (message.type === "taskCreated") {
          taskId = message.task.taskId;
          break;
        }
      }
      await waitFor("the run's second model request", () => (stack.fake.requests.length >= 2 ? true : undefined), 15_000, 50);
      await client.experimental.tasks.cancelTask(taskId);
      expect((await client.experimental.tasks.getTask(taskId)).status).toBe("cancelled");
    } finally {
      release();
      await client.close();
    }
  }, 60_000);
});
