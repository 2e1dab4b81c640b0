import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as StreamableHTTPClientTransportV1 } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { createTaskSessionFromClient, type TaskEnabledSession } from "@modelcontextprotocol/ext-tasks/client";
import { taskId as toTaskId } from "@modelcontextprotocol/ext-tasks/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readTaskStream } from "./harness/task-stream";
import { waitFor } from "../support/wait-for";
import { type EchoExpertStack, echoTaskExpert, holdModelAnswer, startEchoExpertStack } from "./harness/echo-expert-stack";
import { sharedWranglerDev } from "./harness/shared-wrangler-dev";

const RELATED_TASK = "io.modelcontextprotocol/related-task";

/**
 * An expert call run as an MCP Task (2025-11-25) end to end: an SDK v2 client driven by
 * `@modelcontextprotocol/ext-tasks` → `wrangler dev` (the task runs in the ExpertSession) → the
 * fake OpenAI-compatible model, which holds its second reply until the test lets it go, so the
 * task is seen working with its progress before it completes.
 */
describe("expert calls as MCP Tasks through wrangler dev", () => {
  let stack: EchoExpertStack;
  let release = () => {};

  beforeAll(async () => {
    stack = await startEchoExpertStack({
      tag: "expert-tasks",
      onServer: { dev: await sharedWranglerDev(), skill: "expert-tasks" },
      experts: (model) => [echoTaskExpert(model)],
    });
  });
  afterAll(async () => {
    release();
    await stack?.stop();
  });

  /** The model asks for one echo, then answers once the test releases it. */
  function holdSecondReply(): void {
    release = holdModelAnswer(stack.fake, "task-token");
  }

  async function connect(): Promise<{ client: Client; tasks: TaskEnabledSession }> {
    const client = new Client({ name: "slipsnisse-e2e-tasks", version: "0.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(stack.mcpUrl)));
    return { client, tasks: createTaskSessionFromClient(client, { endpointId: "slipsnisse-e2e" }) };
  }

  it("returns a task at once, which is polled with progress to completion, listed, and whose result is fetched", async () => {
    holdSecondReply();
    const { client, tasks } = await connect();
    try {
      expect(tasks.capabilities).toMatchObject({ execution: true, cancellation: true, inventory: "server-list" });
      const execution = await tasks.callTool("echo_expert", { query: "run me as a task" }, { task: { preference: "prefer" } });
      expect(execution.kind).toBe("task");
      const taskId = execution.handle?.taskId ?? toTaskId("none");
      const working = await waitFor(
        "the task to report its first step",
        async () => {
          const view = await tasks.task(taskId).snapshot();
          return view.statusMessage?.startsWith("Step 1 of at most") ? view : undefined;
        },
        15_000,
        100,
      );
      expect(working.status).toBe("working");
      expect((await tasks.listTasks()).tasks.map((task) => [task.taskId, task.status])).toContainEqual([taskId, "working"]);

      release();
      const { outcome } = await execution.settle();
      expect(outcome.status).toBe("completed");
      if (outcome.status !== "completed") return;
      const result = outcome.result as { content: Array<{ type: string; text?: string }>; _meta?: Record<string, unknown> };
      expect(result.content[0]?.text).toContain("downstream said: task-token");
      expect(result._meta?.[RELATED_TASK]).toEqual({ taskId });
      expect((await tasks.listTasks()).tasks.map((task) => [task.taskId, task.status])).toContainEqual([taskId, "completed"]);
    } finally {
      await tasks.close();
      await client.close();
    }
  }, 60_000);

  it("serves the SDK v1 client's experimental tasks too (the same 2025-11-25 wire)", async () => {
    holdSecondReply();
    const client = new ClientV1({ name: "slipsnisse-e2e-tasks-v1", version: "0.0.0" });
    await client.connect(new StreamableHTTPClientTransportV1(new URL(stack.mcpUrl)));
    try {
      expect((await client.listTools()).tools[0]?.execution).toEqual({ taskSupport: "optional" });
      const { seen, text } = await readTaskStream(
        client.experimental.tasks.callToolStream({ name: "echo_expert", arguments: { query: "v1 task" } }, undefined, { task: { ttl: 60_000 } }),
        () => release(),
      );
      expect(seen[0]).toBe("taskCreated");
      expect(seen.at(-1)).toBe("result");
      expect(text).toContain("downstream said: task-token");
      const listed = await client.experimental.tasks.listTasks();
      expect(listed.tasks.length).toBeGreaterThan(0);
    } finally {
      await client.close();
    }
  }, 60_000);

  it("cancels a running task", async () => {
    holdSecondReply();
    const { client, tasks } = await connect();
    try {
      const execution = await tasks.callTool("echo_expert", { query: "cancel me" }, { task: { preference: "prefer" } });
      const taskId = execution.handle?.taskId ?? toTaskId("none");
      // The model's second request is held: the run is mid-flight.
      await waitFor("the run's second model request", () => (stack.fake.requests.length >= 2 ? true : undefined), 15_000, 50);
      await execution.cancel();
      expect((await tasks.task(taskId).snapshot()).status).toBe("cancelled");
    } finally {
      release();
      await tasks.close();
      await client.close();
    }
  }, 60_000);
});
