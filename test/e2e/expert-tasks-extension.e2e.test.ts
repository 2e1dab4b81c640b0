import type { WithTasksOptions } from "@modelcontextprotocol/ext-tasks/client";
import { taskId as toTaskId } from "@modelcontextprotocol/ext-tasks/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectTasksV2, requestMeta } from "../support/tasks-extension-client";
import { waitFor } from "../support/wait-for";
import { type EchoExpertStack, echoTaskExpert, holdModelAnswer, startEchoExpertStack } from "./harness/echo-expert-stack";
import { bearer, signInAs, type OAuthSession } from "./harness/oauth-sign-in";
import { projectWithSecrets, type ProjectWithSecrets } from "./oauth/project-with-secrets";

/**
 * An expert call as a task of the 2026-07-28 Tasks extension end to end: the SDK v2 client pinned
 * to 2026-07-28 with `@modelcontextprotocol/ext-tasks` (its requester session, raw dispatch for the
 * task wire) → `wrangler dev` with OAuth (alice and bob signed in through the dev identity
 * provider) → the task in alice's ExpertSession → the fake OpenAI-compatible model, whose echo
 * call waits for the user's approval (tool_policy) and whose answer the test holds until it has
 * seen the task working again.
 */
describe("expert calls as tasks of the 2026-07-28 Tasks extension through wrangler dev", () => {
  let project: ProjectWithSecrets;
  let stack: EchoExpertStack;
  let alice: OAuthSession;
  let bob: OAuthSession;
  let release = () => {};

  beforeAll(async () => {
    project = await projectWithSecrets();
    stack = await startEchoExpertStack({
      tag: "expert-tasks-v2",
      wrangler: { projectDir: project.dir, vars: { ENVIRONMENT: "local", AUTH: "oauth", IDP: "dev", DEV_USER: "alice", DEV_USERS: "alice,bob" } },
      adminHeaders: bearer({ accessToken: project.adminToken }),
      skill: { tool_policy: { requires_approval: ["fx__echo"] } },
      experts: (model) => [echoTaskExpert(model)],
    });
    [alice, bob] = await Promise.all([signInAs(stack.dev.baseUrl, "alice"), signInAs(stack.dev.baseUrl, "bob")]);
  }, 120_000);
  afterAll(async () => {
    release();
    await stack?.stop();
    await project?.remove();
  });

  /** The model asks for one echo (which waits for approval), then answers once the test releases it. */
  function holdAnswer(): void {
    release = holdModelAnswer(stack.fake, "task-token");
  }

  const connect = (session: OAuthSession, onInputRequest?: WithTasksOptions["onInputRequest"]) =>
    connectTasksV2(`${stack.dev.baseUrl}/mcp`, fetch, { headers: bearer(session), ...(onInputRequest ? { onInputRequest } : {}) });

  it("created at once, polled, approved by the user through tasks/update, completed; another user's task id is not found", async () => {
    holdAnswer();
    const shown: string[] = [];
    const { client, tasks } = await connect(alice, async (request) => {
      shown.push(String(request.params?.message));
      return { action: "accept", content: { approve: true } } as never;
    });
    const other = await connect(bob);
    try {
      expect(client.getServerCapabilities()?.extensions).toEqual({ "io.modelcontextprotocol/tasks": {} });
      const execution = await tasks.callTool("echo_expert", { query: "run me as a task" });
      expect(execution.kind).toBe("task");
      const taskId = execution.handle?.taskId ?? toTaskId("none");
      // Approved, the echo ran and the model's answer is held: the task works on, polled.
      const working = await waitFor(
        "the approved task to work on",
        async () => {
          const view = await tasks.task(taskId).snapshot();
          return view.status === "working" && shown.length === 1 ? view : undefined;
        },
        20_000,
        100,
      );
      expect(working.suggestedPollIntervalMs).toBe(1_000);
      expect(shown[0]).toContain("fx__echo");
      // Bob's session has no such task.
      const foreign = await other.raw("tasks/get", { taskId, _meta: requestMeta(true) });
      expect(foreign.error).toMatchObject({ code: -32602, message: expect.stringContaining("Task not found") });

      release();
      const { outcome } = await execution.settle();
      expect(outcome.status).toBe("completed");
      if (outcome.status !== "completed") return;
      const result = outcome.result as { content: Array<{ type: string; text?: string }> };
      expect(result.content[0]?.text).toContain("downstream said: task-token");
    } finally {
      await tasks.close();
      await client.close();
      await other.tasks.close();
      await other.client.close();
    }
  }, 60_000);

  it("cancels a task that waits for its user's approval", async () => {
    holdAnswer();
    const { client, tasks, raw } = await connect(alice);
    try {
      const created = await raw("tools/call", { name: "echo_expert", arguments: { query: "cancel me" }, _meta: requestMeta(true) });
      expect(created.result).toMatchObject({ resultType: "task", status: "working" });
      const taskId = toTaskId(String(created.result?.taskId));
      await waitFor(
        "the task to wait for approval",
        async () => ((await tasks.task(taskId).snapshot()).status === "input_required" ? true : undefined),
        20_000,
        100,
      );
      await tasks.task(taskId).cancel();
      expect((await tasks.task(taskId).snapshot()).status).toBe("cancelled");
    } finally {
      await tasks.close();
      await client.close();
    }
  }, 60_000);
});
