import { describe, expect, it } from "vitest";
import type { UserProps } from "../../../src/auth/user-props";
import { LISTENER_LIMIT_STATUS, MAX_LISTENERS, type ListenerMessage, listenerMessageSchema } from "../../../src/experts/protocol/session-listeners";
import { usage, useCatalogWithScriptedModels } from "../../support/workers/scripted-model";
import { callOf, expertOf, sessionOf } from "../../support/workers/session-helpers";
import { waitFor } from "../../support/wait-for";

const skill = "listen-sockets";
const dave: UserProps = { userId: "u-dave-listen", login: "dave", role: "member" };
const erin: UserProps = { userId: "u-erin-listen", login: "erin", role: "member" };

interface Listener {
  messages: ListenerMessage[];
  ws: WebSocket;
}

async function listen(user: UserProps, query: string): Promise<Listener | number> {
  const response = await sessionOf(skill, user).fetch(`https://expert-session/listen${query}`, { headers: { upgrade: "websocket" } });
  const ws = response.webSocket;
  if (!ws) return response.status;
  ws.accept();
  const messages: ListenerMessage[] = [];
  ws.addEventListener("message", (event) => {
    messages.push(listenerMessageSchema.parse(JSON.parse(String(event.data))));
  });
  return { messages, ws };
}

function opened(listener: Listener | number): Listener {
  if (typeof listener === "number") throw new Error(`listen socket refused with ${listener}`);
  return listener;
}

/**
 * The session side of `subscriptions/listen` (session-listeners.ts): a socket honours only the
 * session's own 2026-07-28 tasks, hears of runs only when it asked, and a user holds at most
 * MAX_LISTENERS at once. Another user's session is another object: it never honours this one's task.
 */
describe("ExpertSession listen sockets", () => {
  const models = useCatalogWithScriptedModels({ skills: { [skill]: { experts: [expertOf("notes", {})] } } });

  it("honours only its own v2 tasks, signals their changes and new runs to the sockets that asked; another user's session honours none", async () => {
    // The v2 task's run waits until the sockets are open, so its end is a change they hear of.
    let release = () => {};
    const released = new Promise<void>((resolve) => (release = resolve));
    models.play([
      async () => {
        await released;
        return { content: [{ type: "text", text: "first" }], finishReason: { unified: "stop", raw: "stop" }, usage: usage(1, 1), warnings: [] };
      },
      { text: "second" },
    ]);
    const session = sessionOf(skill, dave);
    const v2 = crypto.randomUUID();
    const v1 = crypto.randomUUID();
    const userTask = await session.startTask(v2, callOf(skill, "notes", "as a v2 task", {}, dave), false, 60_000, "v2");
    await session.startTask(v1, callOf(skill, "notes", "as a v1 task", {}, dave), false, 60_000, "v1");
    expect(userTask.generation).toBe("v2");

    const tasks = opened(await listen(dave, `?task=${v2}&task=${v1}&task=no-such`));

    const runs = opened(await listen(dave, "?resources=1"));
    const foreign = opened(await listen(erin, `?resources=1&task=${v2}`));
    try {
      await waitFor("the acks", () => (tasks.messages.length > 0 && runs.messages.length > 0 && foreign.messages.length > 0 ? true : undefined), 5_000, 10);
      expect(tasks.messages[0]).toEqual({ type: "ack", taskIds: [v2] });
      expect(runs.messages[0]).toEqual({ type: "ack", taskIds: [] });
      expect(foreign.messages[0]).toEqual({ type: "ack", taskIds: [] });

      release();
      await waitFor("the v2 task to complete", async () => ((await session.task(v2))?.status === "completed" ? true : undefined), 5_000, 20);
      await waitFor("its change signalled", () => (tasks.messages.some((m) => m.type === "task") ? true : undefined), 5_000, 10);
      expect(tasks.messages.filter((m) => m.type === "task")).toEqual([{ type: "task", taskId: v2 }]);
      expect(tasks.messages.some((m) => m.type === "resources")).toBe(false);

      // A plain call is a new run: the socket that asked for runs hears of it.
      models.play([{ text: "third" }]);
      await session.callExpert(callOf(skill, "notes", "a plain call", {}, dave));
      await waitFor("runs signalled", () => (runs.messages.some((m) => m.type === "resources") ? true : undefined), 5_000, 10);
      expect(runs.messages.some((m) => m.type === "task")).toBe(false);
      // Erin's socket is on her own session: nothing of dave's reached it.
      expect(foreign.messages).toEqual([{ type: "ack", taskIds: [] }]);
    } finally {
      for (const listener of [tasks, runs, foreign]) listener.ws.close(1000);
    }
  });

  it(`refuses a socket beyond ${MAX_LISTENERS} per user and skill, and anything but a WebSocket upgrade`, async () => {
    const held: Listener[] = [];
    try {
      for (let i = 0; i < MAX_LISTENERS; i++) held.push(opened(await listen(erin, "?resources=1")));
      expect(await listen(erin, "?resources=1")).toBe(LISTENER_LIMIT_STATUS);
      // Dave's own sockets are counted in his session, not erin's.
      const other = opened(await listen(dave, "?resources=1"));
      other.ws.close(1000);
      expect((await sessionOf(skill, erin).fetch("https://expert-session/listen")).status).toBe(426);
    } finally {
      for (const listener of held) listener.ws.close(1000);
    }
  });

  it("a legacy SSE socket follows only the tasks it names that are its session's own 2025-11-25 tasks", async () => {
    models.play([{ text: "v1 done" }, { text: "v2 done" }, { text: "erin's" }]);
    const mine = crypto.randomUUID();
    const otherGeneration = crypto.randomUUID();
    const erins = crypto.randomUUID();
    await sessionOf(skill, dave).startTask(mine, callOf(skill, "notes", "v1", {}, dave), false, 60_000, "v1");
    await sessionOf(skill, dave).startTask(otherGeneration, callOf(skill, "notes", "v2", {}, dave), false, 60_000, "v2");
    await sessionOf(skill, erin).startTask(erins, callOf(skill, "notes", "erin", {}, erin), false, 60_000, "v1");
    const watcher = opened(await listen(dave, "?generation=v1"));
    try {
      await waitFor("the ack", () => (watcher.messages.length > 0 ? true : undefined), 5_000, 10);
      // Another user's task, a task of the other generation, garbage, an oversized message: ignored.
      watcher.ws.send(JSON.stringify({ type: "watch", taskId: erins }));
      watcher.ws.send(JSON.stringify({ type: "watch", taskId: otherGeneration }));
      watcher.ws.send("not json");
      watcher.ws.send(JSON.stringify({ type: "watch", taskId: "x".repeat(2_000) }));
      watcher.ws.send(JSON.stringify({ type: "watch", taskId: mine }));
      await waitFor("its own task signalled", () => (watcher.messages.some((m) => m.type === "task") ? true : undefined), 5_000, 10);
      // Messages on one socket arrive in order: nothing came for the ones before.
      expect(watcher.messages).toEqual([
        { type: "ack", taskIds: [] },
        { type: "task", taskId: mine },
      ]);
    } finally {
      watcher.ws.close(1000);
    }
  });
});
