import { env } from "cloudflare:test";
import { describe, expect, inject, it } from "vitest";
import type { LiveEvent, LiveMessage } from "../../../src/experts/live/live-events";
import { LivePublisher } from "../../../src/experts/live/live-publisher";
import { liveFeedStub } from "../../../src/experts/live/live-run-feed";
import { taggedBase } from "../../fixtures/fixture-stats-client";
import { waitFor } from "../../support/wait-for";
import { useCatalogWithScriptedModels, usage } from "../../support/workers/scripted-model";
import { callOf, carol, expertOf, sessionOf } from "../../support/workers/session-helpers";

const fixtures = inject("fixtureServers");
const echo = taggedBase(fixtures.echo, "live-publisher");
const skill = "live-publisher";
const ARGUMENT = "the-caller-argument-7f3a";
const TOOL_INPUT = "the-tool-input-91c2";
const ANSWER = "the-answer-text-44de";

/** The tenant's feed as an admin's browser sees it. */
async function watchFeed(): Promise<{ messages: LiveMessage[]; close(): void }> {
  const response = await liveFeedStub(env).fetch("https://live-feed/socket", { headers: { upgrade: "websocket" } });
  const ws = response.webSocket;
  if (!ws) throw new Error("no WebSocket");
  const messages: LiveMessage[] = [];
  ws.addEventListener("message", (event) => {
    messages.push(JSON.parse(String(event.data)) as LiveMessage);
  });
  ws.accept();
  return { messages, close: () => ws.close(1000, "done") };
}

function eventsOf(messages: LiveMessage[], runId: string): LiveEvent[] {
  return messages.flatMap((message) => {
    if (message.type === "snapshot") return [];
    return (message.type === "run-started" ? message.run.runId : message.runId) === runId ? [message] : [];
  });
}

describe("an ExpertSession publishes its runs to the live feed", () => {
  const models = useCatalogWithScriptedModels({
    skills: {
      [skill]: {
        servers: { echo: { url: `${echo}/mcp`, transport: "streamable-http", headers: { Authorization: "Bearer ${FIXTURE_TOKEN}" } } },
        experts: [expertOf("echoer", { echo: ["echo"] }, { max_steps: 4 }), expertOf("cleaner", { echo: ["erase"] }, { max_steps: 4 })],
      },
    },
  });

  it("sends run started, what it waits on, each step and run ended, with names, counts, tokens and tool statuses but no arguments, results or answers", async () => {
    const feed = await watchFeed();
    const call = callOf(skill, "echoer", ARGUMENT);
    const seen = (what: string, found: (event: LiveEvent) => boolean) =>
      waitFor(what, () => (eventsOf(feed.messages, call.runId).some(found) ? true : undefined));
    const waitingOnModel = (after: number) => (event: LiveEvent) =>
      event.type === "run-waiting" && event.waiting?.on === "model" && event.waiting.since >= after;
    // Each model call waits until an admin's page would show the run waiting on it.
    models.play([
      async () => {
        await seen("the run on the feed", (event) => event.type === "run-started");
        await seen("the run waiting on its model", waitingOnModel(0));
        return {
          content: [{ type: "tool-call", toolCallId: "live-1", toolName: "echo__echo", input: JSON.stringify({ text: TOOL_INPUT }) }],
          finishReason: { unified: "tool-calls", raw: "tool_calls" },
          usage: usage(10, 7),
          warnings: [],
        };
      },
      async () => {
        await seen("step 1 on the feed", (event) => event.type === "run-step" && event.step === 1);
        const stepAt = eventsOf(feed.messages, call.runId).find((event) => event.type === "run-step")?.at ?? 0;
        await seen("the run waiting on its model again, since after step 1", waitingOnModel(stepAt));
        return { content: [{ type: "text", text: ANSWER }], finishReason: { unified: "stop", raw: "stop" }, usage: usage(10, 3), warnings: [] };
      },
    ]);
    const result = await sessionOf(skill).callExpert(call);
    expect(result.outcome).toBe("ok");
    const events = await waitFor("the run's end on the feed", () => {
      const found = eventsOf(feed.messages, call.runId);
      return found.some((event) => event.type === "run-ended") ? found : undefined;
    });
    feed.close();
    const order = events.flatMap((event) =>
      event.type === "run-waiting" ? [] : [event.type === "run-step" ? `step ${event.step}: ${event.activity}` : event.type],
    );
    expect(order).toEqual(["run-started", "step 1: calling echo__echo", "run-ended"]);
    // Waits name the model, the server (connecting) or the tool, nothing else; how many reach the
    // feed depends on the batch window, but never more than a wait's start and end each.
    const waits = events.flatMap((event) =>
      event.type === "run-waiting" ? [event.waiting ? `${event.waiting.on}${event.waiting.name ? ` ${event.waiting.name}` : ""}` : "none"] : [],
    );
    expect(waits.length).toBeGreaterThanOrEqual(2);
    for (const wait of waits) expect(["model", "tool echo__echo", "connection echo", "none"]).toContain(wait);
    expect(events[0]).toMatchObject({ run: { skill, expert: "echoer", user: { id: carol.userId, login: carol.login }, maxSteps: 4, step: 0 } });
    expect(events.at(-1)).toMatchObject({
      outcome: "ok",
      steps: 2,
      toolCalls: 1,
      inputTokens: 20,
      outputTokens: 10,
      tools: [{ name: "echo__echo", status: "ok" }],
    });
    const text = JSON.stringify(events);
    for (const secret of [ARGUMENT, TOOL_INPUT, ANSWER, "tok-fixture-5ecr3t-77"]) expect(text).not.toContain(secret);
  });

  it("says a run waits on an approval of a destructive tool while its user is asked, without the arguments", async () => {
    const feed = await watchFeed();
    const call = callOf(skill, "cleaner", ARGUMENT);
    models.play([{ calls: [{ name: "echo__erase", input: { record: TOOL_INPUT } }] }, { text: ANSWER }]);
    // The user answers only once an admin's page would show the run waiting on them.
    const askUser = async () => {
      await waitFor("the run waiting on the approval", () =>
        eventsOf(feed.messages, call.runId).some((event) => event.type === "run-waiting" && event.waiting?.on === "approval") ? true : undefined,
      );
      return { action: "accept" as const, approve: false };
    };
    const result = await sessionOf(skill).callExpert(call, undefined, askUser);
    expect(result.outcome).toBe("ok");
    const waits = eventsOf(feed.messages, call.runId).flatMap((event) =>
      event.type === "run-waiting" && event.waiting?.on === "approval" ? [event.waiting] : [],
    );
    feed.close();
    expect(waits).toEqual([{ on: "approval", name: "echo__erase", since: expect.any(Number) }]);
    expect(JSON.stringify(eventsOf(feed.messages, call.runId))).not.toContain(TOOL_INPUT);
  });
});

describe("LivePublisher", () => {
  const start = { runId: "run-1", skill: "s", expert: "e", user: carol, startedAt: 1, maxSteps: 2 };

  it("never throws into the run and never rejects what it hands to waitUntil, when the feed is missing or fails", async () => {
    const kept: Promise<unknown>[] = [];
    const state = { waitUntil: (promise: Promise<unknown>) => void kept.push(promise) };
    const missing = { ...env, LIVE_FEED: undefined } as unknown as Env;
    const failing = {
      ...env,
      LIVE_FEED: { idFromName: () => "id", get: () => ({ publish: () => Promise.reject(new Error("feed down")) }) },
    } as unknown as Env;
    for (const broken of [missing, failing]) {
      const publisher = new LivePublisher(broken, state);
      expect(() => publisher.started(start)).not.toThrow();
      expect(() => publisher.step("run-1", { step: 1, maxSteps: 2, message: "calling x" })).not.toThrow();
    }
    expect(kept.length).toBeGreaterThan(0);
    await expect(Promise.all(kept)).resolves.toBeDefined();
  });

  const result = {
    outcome: "ok",
    text: "",
    usage: {
      steps: 2,
      inputTokens: 3,
      outputTokens: 4,
      toolCalls: 0,
      refusedToolCalls: 0,
      downstreamBytesRead: 0,
      bytesReturned: 0,
      elapsedMs: 5,
      budgetExhausted: null,
      retries: 0,
    },
    steps: [],
    messages: [],
  } as const;

  function recordingPublisher(watching = () => true) {
    const calls: LiveEvent[][] = [];
    const feed = {
      publish: async (events: LiveEvent[]) => {
        calls.push(events);
        return watching();
      },
    };
    const fake = { ...env, LIVE_FEED: { idFromName: () => "id", get: () => feed } } as unknown as Env;
    const kept: Promise<unknown>[] = [];
    const publisher = new LivePublisher(fake, { waitUntil: (promise) => void kept.push(promise) });
    const names = () => calls.map((events) => events.map((event) => (event.type === "run-step" ? `step ${event.step}` : event.type)));
    /** A run named `runId` starts, or ends with no steps. */
    const startRun = (runId: string) => publisher.started({ ...start, runId });
    const endRun = (runId: string) => publisher.ended({ ...start, runId }, { ...result, steps: [], messages: [] }, [], 10);
    return { publisher, calls, kept, names, startRun, endRun };
  }

  it("while no page watches, does not send the end of a run the feed never heard of; starts still go, and a watching page is learned from them", async () => {
    let watching = false;
    const { calls, kept, names, startRun, endRun } = recordingPublisher(() => watching);
    // Not yet known whether anyone watches: the end goes, and the feed says no one does.
    startRun("short-1");
    endRun("short-1");
    await Promise.all(kept);
    expect(names()).toEqual([["run-ended"]]);
    // A run as short: no page would draw its end (a page opened later lists it from the run index), so nothing is sent.
    startRun("short-2");
    endRun("short-2");
    await Promise.all(kept);
    expect(calls).toHaveLength(1);
    // A longer run's start goes after the window (a page opened mid-run must show it); a page has opened meanwhile.
    watching = true;
    startRun("long");
    await waitFor("the long run's start", () => (calls.length === 2 ? true : undefined), 5_000);
    endRun("long");
    // The start's answer said a page watches: short runs' ends go again.
    startRun("short-3");
    endRun("short-3");
    await Promise.all(kept);
    const sent = calls.flat().map((event) => `${event.type} ${event.type === "run-started" ? event.run.runId : event.runId}`);
    expect(sent).toEqual(["run-ended short-1", "run-started long", "run-ended long", "run-ended short-3"]);
  });

  it("while no page watches, a run that ends within the window queues nothing; one that lasts it goes with its latest step and wait", async () => {
    let watching = false;
    const { publisher, calls, kept, names, startRun, endRun } = recordingPublisher(() => watching);
    startRun("first");
    endRun("first");
    await Promise.all(kept);
    expect(calls).toHaveLength(1);
    // The feed said no one watches: twenty short runs hand waitUntil one timer of the window between them, and no drain.
    const handed = kept.length;
    for (let i = 0; i < 20; i += 1) {
      startRun(`short-${i}`);
      publisher.waiting(`short-${i}`, { on: "model", since: 1 });
      publisher.step(`short-${i}`, { step: 1, maxSteps: 2, message: "writing the answer" });
      endRun(`short-${i}`);
    }
    expect(kept.length).toBe(handed + 1);
    await Promise.all(kept);
    expect(calls).toHaveLength(1);
    // A run held past the window is sent as the queue would have sent it: its start, latest step and wait.
    watching = true;
    startRun("long");
    publisher.step("long", { step: 1, maxSteps: 2, message: "calling a" });
    publisher.step("long", { step: 2, maxSteps: 2, message: "calling b" });
    publisher.waiting("long", { on: "model", since: 2 });
    await waitFor("the long run's start", () => (calls.length === 2 ? true : undefined), 5_000);
    expect(names()).toEqual([["run-ended"], ["run-started", "step 2", "run-waiting"]]);
    expect(calls[1]?.[0]?.type === "run-started" && calls[1][0].run.runId).toBe("long");
    endRun("long");
    await Promise.all(kept);
    expect(names()[2]).toEqual(["run-ended"]);
  });

  it("sends a run that ends within the batch window as its end alone, in one call", async () => {
    const { publisher, kept, names } = recordingPublisher();
    publisher.started(start);
    publisher.step("run-1", { step: 1, maxSteps: 2, message: "calling a" });
    publisher.step("run-1", { step: 2, maxSteps: 2, message: "writing the answer" });
    publisher.ended(start, { ...result, steps: [], messages: [] }, [], 10);
    await Promise.all(kept);
    expect(names()).toEqual([["run-ended"]]);
  });

  it("sends a longer run's start with its latest step after the window, then its end at once, one call at a time", async () => {
    const { publisher, calls, kept, names } = recordingPublisher();
    publisher.started(start);
    publisher.step("run-1", { step: 1, maxSteps: 2, message: "calling a" });
    await waitFor("the first call", () => (calls.length === 1 ? true : undefined), 5_000);
    expect(names()).toEqual([["run-started", "step 1"]]);
    publisher.step("run-1", { step: 2, maxSteps: 2, message: "writing the answer" });
    publisher.ended(start, { ...result, steps: [], messages: [] }, [], 10);
    await Promise.all(kept);
    expect(names()).toEqual([["run-started", "step 1"], ["run-ended"]]);
  });
});
