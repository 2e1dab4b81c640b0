import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { LiveEvent, LiveMessage, LiveRun, LiveWait } from "../../../src/experts/live/live-events";
import { ENDED_TTL_MS, IN_FLIGHT_TTL_MS, MAX_LIVE_RUNS, MAX_RECENT_ENDED, SOCKET_EXPIRES_HEADER } from "../../../src/experts/live/live-run-feed";
import { waitFor } from "../../support/wait-for";

/** A feed of its own per test, so tests neither see nor disturb each other's runs. */
function freshFeed() {
  return env.LIVE_FEED.get(env.LIVE_FEED.idFromName(`feed-test-${crypto.randomUUID()}`));
}

type Feed = ReturnType<typeof freshFeed>;

interface OpenSocket {
  ws: WebSocket;
  messages: LiveMessage[];
  closed: { code: number } | undefined;
}

async function openSocket(feed: Feed, headers: Record<string, string> = {}): Promise<OpenSocket> {
  const response = await feed.fetch("https://live-feed/socket", { headers: { upgrade: "websocket", ...headers } });
  expect(response.status).toBe(101);
  const ws = response.webSocket;
  if (!ws) throw new Error("no WebSocket in the 101");
  const socket: OpenSocket = { ws, messages: [], closed: undefined };
  ws.addEventListener("message", (event) => {
    socket.messages.push(JSON.parse(String(event.data)) as LiveMessage);
  });
  ws.addEventListener("close", (event) => {
    socket.closed = { code: event.code };
  });
  ws.accept();
  return socket;
}

function started(runId: string, at = Date.now()): LiveEvent {
  const run: LiveRun = {
    runId,
    skill: "docs",
    expert: "search_docs",
    user: { id: "dev-alice", login: "alice" },
    startedAt: at,
    maxSteps: 4,
    step: 0,
    activity: "starting",
    updatedAt: at,
  };
  return { type: "run-started", at, run };
}

const step = (runId: string, n: number): LiveEvent => ({ type: "run-step", at: Date.now(), runId, step: n, maxSteps: 4, activity: `calling fx__echo (${n})` });

const waiting = (runId: string, wait: LiveWait | null): LiveEvent => ({ type: "run-waiting", at: Date.now(), runId, waiting: wait });

const ended = (runId: string, at = Date.now()): LiveEvent => ({
  type: "run-ended",
  at,
  runId,
  skill: "docs",
  expert: "search_docs",
  user: { id: "dev-alice", login: "alice" },
  outcome: "ok",
  steps: 2,
  toolCalls: 1,
  inputTokens: 120,
  outputTokens: 30,
  elapsedMs: 40,
  tools: [{ name: "fx__echo", status: "ok" }],
});

const typesFor = (socket: OpenSocket, runId: string) =>
  socket.messages.flatMap((message) => {
    if (message.type === "snapshot") return [];
    const id = message.type === "run-started" ? message.run.runId : message.runId;
    if (id !== runId) return [];
    if (message.type === "run-step") return [`step ${message.step}`];
    if (message.type === "run-waiting") return [`waiting ${message.waiting?.on ?? "nothing"}`];
    return [message.type];
  });

describe("LiveRunFeed", () => {
  it("sends each event to every open socket, in order, after a snapshot on connect", async () => {
    const feed = freshFeed();
    const [first, second] = [await openSocket(feed), await openSocket(feed)];
    const runId = crypto.randomUUID();
    await feed.publish([started(runId), step(runId, 1)]);
    await feed.publish([step(runId, 2), ended(runId)]);
    for (const socket of [first, second]) {
      await waitFor("all four events on the socket", () => (typesFor(socket, runId).length === 4 ? true : undefined), 5_000);
      expect(socket.messages[0]).toMatchObject({ type: "snapshot", runs: [], recent: [] });
      expect(typesFor(socket, runId)).toEqual(["run-started", "step 1", "step 2", "run-ended"]);
    }
    first.ws.close(1000, "done");
    second.ws.close(1000, "done");
  });

  it("keeps the runs in flight, so a socket opened mid-run starts from where they are, and forgets them when they end", async () => {
    const feed = freshFeed();
    const [a, b] = [crypto.randomUUID(), crypto.randomUUID()];
    await feed.publish([started(a)]);
    await feed.publish([started(b)]);
    await feed.publish([step(a, 1)]);
    const late = await openSocket(feed);
    const snapshot = await waitFor("the snapshot", () => late.messages.find((message) => message.type === "snapshot"), 5_000);
    expect(snapshot.type === "snapshot" && snapshot.runs.map((run) => [run.runId, run.step, run.activity])).toEqual(
      expect.arrayContaining([
        [a, 1, "calling fx__echo (1)"],
        [b, 0, "starting"],
      ]),
    );
    await feed.publish([ended(a)]);
    expect((await feed.inFlight()).map((run) => run.runId)).toEqual([b]);
    late.ws.close(1000, "done");
  });

  it("ignores what would move a run backwards: an old step, a step after the end, a step or start of an ended run", async () => {
    const feed = freshFeed();
    const socket = await openSocket(feed);
    const runId = crypto.randomUUID();
    await feed.publish([started(runId)]);
    await feed.publish([step(runId, 2)]);
    await feed.publish([step(runId, 1)]);
    await feed.publish([ended(runId)]);
    await feed.publish([step(runId, 3)]);
    await feed.publish([started(runId)]);
    await feed.publish([step(crypto.randomUUID(), 1)]);
    await waitFor("the end", () => (typesFor(socket, runId).includes("run-ended") ? true : undefined), 5_000);
    // One more event that is sent, so every event before it has been handled.
    const marker = crypto.randomUUID();
    await feed.publish([started(marker)]);
    await waitFor("the marker", () => (typesFor(socket, marker).length > 0 ? true : undefined), 5_000);
    expect(typesFor(socket, runId)).toEqual(["run-started", "step 2", "run-ended"]);
    expect((await feed.inFlight()).map((run) => run.runId)).toEqual([marker]);
    socket.ws.close(1000, "done");
  });

  it("keeps the end of a run it never stored (it ended within the publisher's window) among the recently ended, and passes it on", async () => {
    const feed = freshFeed();
    const socket = await openSocket(feed);
    const runId = crypto.randomUUID();
    await feed.publish([ended(runId)]);
    await waitFor("the end", () => (typesFor(socket, runId).length > 0 ? true : undefined), 5_000);
    expect(typesFor(socket, runId)).toEqual(["run-ended"]);
    const snapshot = await feed.snapshot();
    expect(snapshot.runs).toEqual([]);
    expect(snapshot.recent).toEqual([ended(runId, snapshot.recent[0]?.at)]);
    socket.ws.close(1000, "done");
  });

  it(`shows a socket opened after runs ended the last ${MAX_RECENT_ENDED} of them, newest first, for ${ENDED_TTL_MS / 60_000} minutes`, async () => {
    const feed = freshFeed();
    const at = Date.now();
    const ids = Array.from({ length: MAX_RECENT_ENDED + 2 }, (_, index) => `ended-${String(index).padStart(3, "0")}`);
    for (const [index, id] of ids.entries()) await feed.publish([ended(id, at + index)]);
    const late = await openSocket(feed);
    const snapshot = await waitFor("the snapshot", () => late.messages.find((message) => message.type === "snapshot"), 5_000);
    expect(snapshot.type === "snapshot" && snapshot.runs).toEqual([]);
    expect(snapshot.type === "snapshot" && snapshot.recent.map((run) => run.runId)).toEqual(ids.slice(2).reverse());
    // Names, counts and statuses only, as the event carried them.
    expect(snapshot.type === "snapshot" && snapshot.recent[0]).toEqual(ended(ids.at(-1) ?? "", at + ids.length - 1));
    late.ws.close(1000, "done");
    // Forgotten ENDED_TTL_MS after they ended, by the alarm the first end set.
    expect(await runInDurableObject(feed, (_instance, state) => state.storage.getAlarm())).toBe(at + ENDED_TTL_MS);
    expect((await feed.snapshot(at + ids.length - 1 + ENDED_TTL_MS + 1)).recent).toEqual([]);
  });

  it("tells what a run waits on and since when, replacing the wait before, and keeps it for a socket opened later", async () => {
    const feed = freshFeed();
    const socket = await openSocket(feed);
    const runId = crypto.randomUUID();
    const at = Date.now();
    await feed.publish([started(runId, at), waiting(runId, { on: "model", since: at })]);
    await feed.publish([step(runId, 1), waiting(runId, { on: "tool", name: "fx__echo", since: at + 5 })]);
    await waitFor("four events", () => (typesFor(socket, runId).length === 4 ? true : undefined), 5_000);
    expect(typesFor(socket, runId)).toEqual(["run-started", "waiting model", "step 1", "waiting tool"]);
    expect((await feed.inFlight())[0]?.waiting).toEqual({ on: "tool", name: "fx__echo", since: at + 5 });
    await feed.publish([waiting(runId, null)]);
    expect((await feed.inFlight())[0]).not.toHaveProperty("waiting");
    await feed.publish([waiting(runId, { on: "approval", name: "fx__delete", since: at + 9 })]);
    const late = await openSocket(feed);
    const snapshot = await waitFor("the snapshot", () => late.messages.find((message) => message.type === "snapshot"), 5_000);
    expect(snapshot.type === "snapshot" && snapshot.runs[0]?.waiting).toEqual({ on: "approval", name: "fx__delete", since: at + 9 });
    // A wait of an ended run changes nothing.
    await feed.publish([ended(runId)]);
    await feed.publish([waiting(runId, { on: "model", since: at + 20 })]);
    expect(typesFor(socket, runId).at(-1)).toBe("run-ended");
    expect(await feed.inFlight()).toEqual([]);
    socket.ws.close(1000, "done");
    late.ws.close(1000, "done");
  });

  it("expires a run that never ended, and sets its alarm for when it expires", async () => {
    const feed = freshFeed();
    const at = Date.now();
    const runId = crypto.randomUUID();
    await feed.publish([started(runId, at)]);
    expect(await runInDurableObject(feed, (_instance, state) => state.storage.getAlarm())).toBe(at + IN_FLIGHT_TTL_MS);
    expect((await feed.inFlight(at + IN_FLIGHT_TTL_MS - 1)).map((run) => run.runId)).toEqual([runId]);
    expect(await feed.inFlight(at + IN_FLIGHT_TTL_MS + 1)).toEqual([]);
    const rows = await runInDurableObject(feed, (_instance, state) => state.storage.sql.exec(`SELECT COUNT(*) AS n FROM live_runs`).one().n);
    expect(rows).toBe(0);
  });

  it("the alarm deletes an expired run and then clears itself", async () => {
    const feed = freshFeed();
    const old = Date.now() - IN_FLIGHT_TTL_MS - 1_000;
    await feed.publish([started(crypto.randomUUID(), old)]);
    expect(await runDurableObjectAlarm(feed)).toBe(true);
    const after = await runInDurableObject(feed, async (_instance, state) => ({
      rows: state.storage.sql.exec(`SELECT COUNT(*) AS n FROM live_runs`).one().n,
      alarm: await state.storage.getAlarm(),
    }));
    expect(after).toEqual({ rows: 0, alarm: null });
  });

  it(`keeps at most ${MAX_LIVE_RUNS} runs in flight, dropping the oldest`, async () => {
    const feed = freshFeed();
    const at = Date.now();
    const ids = Array.from({ length: MAX_LIVE_RUNS + 3 }, (_, index) => `run-${String(index).padStart(4, "0")}`);
    for (const [index, id] of ids.entries()) await feed.publish([started(id, at + index)]);
    const kept = (await feed.inFlight()).map((run) => run.runId);
    expect(kept).toHaveLength(MAX_LIVE_RUNS);
    expect(kept).toEqual(ids.slice(3));
  });

  it("closes a socket whose admin session has ended instead of sending to it, so the browser reconnects and is checked again", async () => {
    const feed = freshFeed();
    const socket = await openSocket(feed, { [SOCKET_EXPIRES_HEADER]: "1" });
    await feed.publish([started(crypto.randomUUID())]);
    await waitFor("the close", () => socket.closed, 5_000);
    expect(socket.closed?.code).toBe(4001);
    expect(socket.messages.filter((message) => message.type !== "snapshot")).toEqual([]);
  });

  it("answers only WebSocket upgrades", async () => {
    const response = await freshFeed().fetch("https://live-feed/socket");
    expect(response.status).toBe(426);
  });
});
