import { TaskStatusNotificationV2Schema } from "@modelcontextprotocol/ext-tasks/core/v2";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectTasksV2, requestMeta } from "../../support/tasks-extension-client";
import { waitFor } from "../../support/wait-for";
import { type EchoExpertStack, startEchoExpertStack, echoTaskExpert } from "../harness/echo-expert-stack";
import { textReply, toolCallsReply, toolResultMessages } from "../harness/fake-openai-server";
import { bearer, signInAs, type OAuthSession } from "../harness/oauth-sign-in";
import { pushSharedSkill } from "../harness/shared-wrangler-dev";
import { sharedDevTeamServer, type DevTeamServer, teamExpert } from "./dev-team-server";

/** This file's skill on the shared team server. */
const SKILL = "listen-stream";
const PROTOCOL = "2026-07-28";
const SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId";

type Message = { id?: unknown; method?: string; params?: Record<string, unknown>; result?: unknown; error?: { code: number; message: string } };

interface RawListen {
  status: number;
  /** Every JSON-RPC message the stream carried so far (a JSON answer when the server refused). */
  messages: Message[];
  close(): void;
}

/**
 * `subscriptions/listen` of the 2026-07-28 protocol through `wrangler dev` with OAuth on: alice
 * and bob signed in through the dev identity provider; alice's task (the Tasks extension) waits
 * for her approval, is approved through `tasks/update` and completes, and her listen stream sees
 * each status as a `notifications/tasks` and her new runs as `notifications/resources/list_changed`
 * (through the SDK v2 client's own `listen()` too). Bob, listening on the same skill and naming
 * alice's task id, hears nothing of hers.
 */
describe("subscriptions/listen carries only the caller's own runs and tasks", () => {
  let server: DevTeamServer;
  let stack: EchoExpertStack;
  let alice: OAuthSession;
  let bob: OAuthSession;
  const gates = { first: () => {}, answer: () => {} };
  const opened: RawListen[] = [];

  beforeAll(async () => {
    server = await sharedDevTeamServer();
    stack = await startEchoExpertStack({
      tag: "listen-stream",
      onServer: { dev: server.dev, skill: SKILL },
      adminHeaders: bearer({ accessToken: server.adminToken }),
      skill: { tool_policy: { requires_approval: ["fx__echo"] } },
      experts: (model) => [echoTaskExpert(model)],
    });
    [alice, bob] = await Promise.all([signInAs(server.dev.baseUrl, "alice"), signInAs(server.dev.baseUrl, "bob")]);
  }, 120_000);
  afterAll(async () => {
    gates.first();
    gates.answer();
    for (const listen of opened) listen.close();
    await stack?.stop();
    await server?.stop();
  });

  /** The model's first reply (an echo call, which waits for approval) and its answer each wait for the test. */
  function gatedModel(): void {
    const first = new Promise<void>((resolve) => (gates.first = resolve));
    const answer = new Promise<void>((resolve) => (gates.answer = resolve));
    stack.fake.reset(async (request) => {
      const results = toolResultMessages(request);
      if (results.length === 0) {
        await first;
        return toolCallsReply({ name: "fx__echo", arguments: { text: "listen-token" } });
      }
      await answer;
      return textReply(`downstream said: ${results.map((r) => r.content).join(" | ")}`);
    });
  }

  /** A plain `subscriptions/listen` POST whose SSE messages are collected as they arrive. */
  async function rawListen(
    session: OAuthSession,
    notifications: Record<string, unknown>,
    id: string | number,
    tasks = true,
    url = stack.mcpUrl,
  ): Promise<RawListen> {
    const abort = new AbortController();
    const response = await fetch(url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": PROTOCOL,
        "mcp-method": "subscriptions/listen",
        ...bearer(session),
      },
      body: JSON.stringify({ jsonrpc: "2.0", id, method: "subscriptions/listen", params: { _meta: requestMeta(tasks), notifications } }),
      signal: abort.signal,
    });
    const messages: Message[] = [];
    const listen = { status: response.status, messages, close: () => abort.abort() };
    opened.push(listen);
    if (!response.headers.get("content-type")?.includes("text/event-stream")) {
      messages.push((await response.json()) as Message);
      return listen;
    }
    const reader = response.body?.getReader();
    const decoder = new TextDecoder();
    void (async () => {
      let buffer = "";
      for (;;) {
        const { value, done } = (await reader?.read()) ?? { done: true, value: undefined };
        if (done) return;
        buffer += decoder.decode(value, { stream: true });
        let end = buffer.indexOf("\n\n");
        while (end >= 0) {
          const data = buffer
            .slice(0, end)
            .split("\n")
            .filter((line) => line.startsWith("data:"))
            .map((line) => line.slice(5).trim())
            .join("");
          if (data) messages.push(JSON.parse(data) as Message);
          buffer = buffer.slice(end + 2);
          end = buffer.indexOf("\n\n");
        }
      }
    })().catch(() => undefined);
    return listen;
  }

  const ackOf = (listen: RawListen) =>
    waitFor("the acknowledgement", () => listen.messages.find((m) => m.method === "notifications/subscriptions/acknowledged"), 10_000);
  const taskNotes = (listen: RawListen) => listen.messages.filter((m) => m.method === "notifications/tasks");
  const runNotes = (listen: RawListen) => listen.messages.filter((m) => m.method === "notifications/resources/list_changed");

  it("alice hears each status of her task and of her new runs; bob, naming her task, hears nothing of hers", async () => {
    gatedModel();
    const aliceClient = await connectTasksV2(stack.mcpUrl, fetch, { headers: bearer(alice) });
    const bobClient = await connectTasksV2(stack.mcpUrl, fetch, { headers: bearer(bob) });
    try {
      // Both listen for run list changes, alice also through the SDK v2 client's own listen().
      const aliceRuns = await rawListen(alice, { resourcesListChanged: true, toolsListChanged: true }, "alice-runs");
      const bobRuns = await rawListen(bob, { resourcesListChanged: true }, "bob-runs");
      expect((await ackOf(aliceRuns)).params).toEqual({
        notifications: { resourcesListChanged: true, toolsListChanged: true },
        _meta: { [SUBSCRIPTION_ID]: "alice-runs" },
      });
      expect((await ackOf(bobRuns)).params?.notifications).toEqual({ resourcesListChanged: true });
      let sdkRunsChanged = 0;
      aliceClient.client.setNotificationHandler("notifications/resources/list_changed", () => {
        sdkRunsChanged++;
      });
      const sdkListen = await aliceClient.client.listen({ resourcesListChanged: true });
      expect(sdkListen.honoredFilter).toEqual({ resourcesListChanged: true });

      // Alice's task: created at once, its run waits on the model.
      const created = await aliceClient.raw("tools/call", { name: "echo_expert", arguments: { query: "listen to me" }, _meta: requestMeta(true) });
      expect(created.result).toMatchObject({ resultType: "task", status: "working" });
      const taskId = String(created.result?.taskId);
      await waitFor("alice's new run announced", () => (runNotes(aliceRuns).length >= 1 ? true : undefined), 10_000);
      expect(runNotes(aliceRuns)[0]?.params).toEqual({ _meta: { [SUBSCRIPTION_ID]: "alice-runs" } });
      await waitFor("the SDK client told of the new run", () => (sdkRunsChanged >= 1 ? true : undefined), 10_000);
      // The new run is in alice's resources/list.
      const listed = await aliceClient.client.listResources();
      expect(listed.resources.length).toBeGreaterThan(0);

      // Alice listens to her task; bob names the same id (and one of his own that does not exist).
      const aliceTask = await rawListen(alice, { taskIds: [taskId] }, 7);
      const bobTask = await rawListen(bob, { taskIds: [taskId, "no-such-task"] }, 8);
      expect((await ackOf(aliceTask)).params?.notifications).toEqual({ taskIds: [taskId] });
      // Nothing of bob's request is honoured: the stream ends at once, gracefully.
      expect((await ackOf(bobTask)).params?.notifications).toEqual({});
      await waitFor("bob's stream to end", () => bobTask.messages.find((m) => m.id === 8 && m.result !== undefined), 10_000);

      const statuses = () => taskNotes(aliceTask).map((m) => m.params?.status);
      await waitFor("the task's status at once", () => (statuses().length >= 1 ? true : undefined), 10_000);
      expect(statuses()).toEqual(["working"]);
      gates.first();
      const waiting = await waitFor("input_required", () => taskNotes(aliceTask).find((m) => m.params?.status === "input_required"), 20_000);
      // Each notification is the extension's DetailedTask, stamped with the subscription.
      const parsed = TaskStatusNotificationV2Schema.parse({ jsonrpc: "2.0", method: waiting.method, params: waiting.params });
      expect(parsed.params.taskId).toBe(taskId);
      expect(waiting.params?._meta).toEqual({ [SUBSCRIPTION_ID]: 7 });
      const inputRequests = waiting.params?.inputRequests as Record<string, { method: string; params: { message: string } }>;
      const [key, question] = Object.entries(inputRequests)[0] ?? [];
      expect(question?.method).toBe("elicitation/create");
      expect(question?.params.message).toContain("fx__echo");

      // Approved through tasks/update: working again (a new run: announced), then completed.
      const updated = await aliceClient.raw("tasks/update", {
        taskId,
        inputResponses: { [String(key)]: { action: "accept", content: { approve: true } } },
        _meta: requestMeta(true),
      });
      expect(updated.result).toMatchObject({ resultType: "complete" });
      await waitFor("working again", () => (statuses().at(-1) === "working" && statuses().length === 3 ? true : undefined), 20_000);
      await waitFor("the resumed run announced", () => (runNotes(aliceRuns).length >= 2 ? true : undefined), 10_000);
      gates.answer();
      const done = await waitFor("completed", () => taskNotes(aliceTask).find((m) => m.params?.status === "completed"), 20_000);
      expect(statuses()).toEqual(["working", "input_required", "working", "completed"]);
      const result = (done.params?.result ?? {}) as { content?: Array<{ text?: string }> };
      expect(result.content?.[0]?.text).toContain("downstream said: listen-token");
      TaskStatusNotificationV2Schema.parse({ jsonrpc: "2.0", method: done.method, params: done.params });

      // Bob's own run reaches his stream: it is live, and it carried nothing of alice's before it.
      void bobClient.client.callTool({ name: "echo_expert", arguments: { query: "bob's own" } }).catch(() => undefined);
      await waitFor("bob's own run announced", () => (runNotes(bobRuns).length >= 1 ? true : undefined), 20_000);
      expect(bobRuns.messages.map((m) => m.method)).toEqual(["notifications/subscriptions/acknowledged", "notifications/resources/list_changed"]);
      expect(bobTask.messages.filter((m) => m.method !== "notifications/subscriptions/acknowledged" && m.id === undefined)).toEqual([]);
      expect(JSON.stringify([...bobRuns.messages, ...bobTask.messages])).not.toContain(taskId);
      await sdkListen.close();
    } finally {
      gates.first();
      gates.answer();
      await Promise.allSettled([aliceClient.tasks.close(), aliceClient.client.close(), bobClient.tasks.close(), bobClient.client.close()]);
    }
  }, 90_000);

  it("task ids without the Tasks extension declared are refused with -32021; a malformed filter with -32602; no Mcp-Method with -32020", async () => {
    const undeclared = await rawListen(alice, { taskIds: ["any"] }, "undeclared", false);
    expect(undeclared.status).toBe(400);
    expect(undeclared.messages[0]?.error).toMatchObject({ code: -32021 });
    const malformed = await rawListen(alice, { taskIds: "not-a-list" }, "malformed");
    expect(malformed.messages[0]?.error).toMatchObject({ code: -32602 });
    const tooMany = await rawListen(alice, { taskIds: Array.from({ length: 101 }, (_, i) => `t${i}`) }, "too-many");
    expect(tooMany.messages[0]?.error).toMatchObject({ code: -32602 });
    // Without its Mcp-Method header (SEP-2243) the SDK refuses it before anything is opened.
    const headerless = await fetch(stack.mcpUrl, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": PROTOCOL, ...bearer(alice) },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "subscriptions/listen",
        params: { _meta: requestMeta(true), notifications: { resourcesListChanged: true } },
      }),
    });
    expect(headerless.status).toBe(400);
    expect(((await headerless.json()) as Message).error).toMatchObject({ code: -32020 });
  }, 30_000);

  it("a user holds at most 8 listen streams on a skill; a closed stream frees its place; a catalog change is announced", async () => {
    const limited = await pushSharedSkill(
      server.dev,
      "listen-stream-limit",
      { experts: [teamExpert(server.fake)] },
      bearer({ accessToken: server.adminToken }),
    );
    const held: RawListen[] = [];
    for (let i = 0; i < 8; i++) {
      const listen = await rawListen(bob, { resourcesListChanged: true }, `held-${i}`, true, limited.mcpUrl);
      expect((await ackOf(listen)).params?.notifications).toEqual({ resourcesListChanged: true });
      held.push(listen);
    }
    const refused = await rawListen(bob, { resourcesListChanged: true }, "ninth", true, limited.mcpUrl);
    expect(refused.messages[0]?.error).toEqual({ code: -32603, message: "Subscription limit reached" });
    // Alice's streams are counted in her own session.
    const alices = await rawListen(alice, { resourcesListChanged: true, toolsListChanged: true }, "alice-there", true, limited.mcpUrl);
    expect((await ackOf(alices)).params?.notifications).toEqual({ resourcesListChanged: true, toolsListChanged: true });
    // A catalog change of the skill reaches every listener that asked, in this isolate (wrangler dev has one).
    await pushSharedSkill(
      server.dev,
      "listen-stream-limit",
      { description: "A new version.", experts: [teamExpert(server.fake)] },
      bearer({ accessToken: server.adminToken }),
    );
    const changed = await waitFor("tools/list_changed", () => alices.messages.find((m) => m.method === "notifications/tools/list_changed"), 10_000);
    expect(changed.params).toEqual({ _meta: { [SUBSCRIPTION_ID]: "alice-there" } });
    // Bob's client closes one: the server notices at its second keep-alive write after (about 4 s).
    held[0]?.close();
    const closedAt = Date.now();
    const again = await waitFor(
      "a place freed",
      async () => {
        const listen = await rawListen(bob, { resourcesListChanged: true }, "again", true, limited.mcpUrl);
        if (listen.messages[0]?.error) return undefined;
        return listen;
      },
      45_000,
      500,
    );
    console.log(`listen place freed ${Date.now() - closedAt} ms after the client closed its stream`);
    expect((await ackOf(again)).params?.notifications).toEqual({ resourcesListChanged: true });
  }, 60_000);
});
