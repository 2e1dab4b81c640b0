import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { Client, SSEClientTransport } from "@modelcontextprotocol/client";
import { describe, expect, it } from "vitest";
import type { UserProps } from "../../../src/auth/user-props";
import { type LedgerCall, type LedgerInitialize, MAX_REMEMBERED_CALLS, SseCallLedger } from "../../../src/mcp/legacy-sse/sse-call-ledger";
import { streamIndexName, MAX_INDEXED_CONNECTIONS, SseStreamIndex } from "../../../src/mcp/legacy-sse/sse-stream-index";
import { gate, toResult, useCatalogWithScriptedModels } from "../../support/workers/scripted-model";
import { waitFor } from "../../support/wait-for";
import { askDocsCatalog } from "../expert-test-setup";
import { appFetchAs } from "../mcp-test-client";

const SKILL = "sse-reconnect";
const SSE_URL = `https://team.example.com/s/${SKILL}/sse`;

function member(name: string): UserProps {
  return { userId: `dev-sse-reconnect-${name}-${crypto.randomUUID().slice(0, 8)}`, login: name, role: "member" };
}

function stream(sessionId: string) {
  return env.LEGACY_SSE.get(env.LEGACY_SSE.idFromName(sessionId));
}

function indexOf(user: UserProps) {
  return env.LEGACY_SSE.get(env.LEGACY_SSE.idFromName(streamIndexName(SKILL, user.userId)));
}

function call(requestId: string | number, overrides: Partial<LedgerCall> = {}): LedgerCall {
  const now = Date.now();
  return { requestId, runId: crypto.randomUUID(), structured: false, deadline: now + 20_000, expiresAt: now + 80_000, ...overrides };
}

/**
 * A stream a restart cut, as its Durable Object is afterwards: the ledger its calls left,
 * no stream in memory (never opened in this instance), listed in its user's index.
 */
async function cutStream(user: UserProps, calls: LedgerCall[], client = "", initialize?: LedgerInitialize): Promise<string> {
  const sessionId = crypto.randomUUID();
  await runInDurableObject(stream(sessionId), (_instance, state) => {
    const ledger = new SseCallLedger(state.storage);
    for (const cut of calls) ledger.record(cut, { owner: user.userId, client, ...(initialize ? { initialize } : {}) });
  });
  await indexOf(user).noteStream(sessionId, Date.now() + 600_000);
  return sessionId;
}

/** The GET an SDK client's EventSource sends when it reconnects (after `initialize` it carries the negotiated revision). */
function reconnect(user: UserProps, headers: Record<string, string> = {}): Promise<Response> {
  return appFetchAs(user, SSE_URL, { headers: { accept: "text/event-stream", "mcp-protocol-version": "2025-11-25", ...headers } });
}

interface Frame {
  id?: string;
  event?: string;
  data: string;
}

/** Reads SSE frames until `enough` says so (bounded), then lets the stream go. */
async function framesOf(response: Response, enough: (frames: Frame[]) => boolean): Promise<Frame[]> {
  const reader = response.body?.getReader();
  if (!reader) throw new Error(`no stream: ${response.status}`);
  const decoder = new TextDecoder();
  let text = "";
  const frames: Frame[] = [];
  for (let reads = 0; reads < 50 && !enough(frames); reads++) {
    const { value, done } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
    const blocks = text.split("\n\n");
    text = blocks.pop() ?? "";
    for (const block of blocks) {
      const field = (name: string) =>
        block
          .split("\n")
          .find((line) => line.startsWith(`${name}: `))
          ?.slice(name.length + 2);
      const data = field("data");
      if (data !== undefined) frames.push({ id: field("id"), event: field("event"), data });
    }
  }
  await reader.cancel();
  return frames;
}

const messages = (frames: Frame[]) => frames.filter((frame) => frame.event === "message").map((frame) => JSON.parse(frame.data) as Record<string, unknown>);

describe("legacy SSE calls cut by a restart, answered on the client's reconnect", () => {
  const models = useCatalogWithScriptedModels(askDocsCatalog(SKILL));

  it("a call in flight is in its stream's ledger and its user's index, and leaves no storage once answered", async () => {
    const user = member("ledger");
    const held = gate();
    models.play([
      async () => {
        await held.opened;
        return toResult({ text: "answered on its own stream" });
      },
    ]);
    const client = new Client({ name: "sse-ledger", version: "0.0.0" });
    await client.connect(new SSEClientTransport(new URL(SSE_URL), { fetch: (input, init) => appFetchAs(user, input, init) }));
    try {
      const answer = client.callTool({ name: "ask_docs", arguments: { query: "hold" } });
      const [sessionId] = await waitFor(
        "the stream in its user's index",
        async () => {
          const listed = await indexOf(user).recentStreams();
          return listed.length > 0 ? listed : undefined;
        },
        5_000,
        20,
      );
      if (sessionId === undefined) throw new Error("no stream listed");
      const inFlight = await runInDurableObject(stream(sessionId), (_instance, state) => new SseCallLedger(state.storage).cut(user.userId, undefined));
      expect(inFlight).toHaveLength(1);
      expect(inFlight[0]?.runId).toMatch(/^[0-9a-f-]{36}$/);
      // Its stream is open: nothing to take over while it is.
      expect(await stream(sessionId).cutCalls(user.userId)).toBe(0);
      held.open();
      expect(JSON.stringify((await answer).content)).toContain("answered on its own stream");
      const stored = await runInDurableObject(stream(sessionId), (_instance, state) => [...state.storage.kv.list()]);
      expect(stored).toEqual([]);
    } finally {
      held.open();
      await client.close();
    }
  });

  it("a reconnect of the same user answers each cut call by its request id with the interrupted run's tool error, and takes them off the ledger", async () => {
    const user = member("own");
    const cut = [call("call-1"), call(7)];
    const sessionId = await cutStream(user, cut);
    const response = await reconnect(user);
    expect(response.status).toBe(200);
    const frames = await framesOf(response, (seen) => messages(seen).length >= 2);
    expect(frames[0]?.event).toBe("endpoint");
    // Events carry ids naming the stream, for a client that sends Last-Event-ID back.
    expect(frames[0]?.id).toMatch(/^[0-9a-f-]{36}:0$/);
    const answers = messages(frames);
    for (const [index, expected] of cut.entries()) {
      const answer = answers.find((message) => message.id === expected.requestId) as {
        result?: { isError?: boolean; content?: Array<{ text?: string }>; _meta?: Record<string, unknown> };
      };
      expect(answer?.result?.isError, JSON.stringify(answers)).toBe(true);
      expect(answer?.result?.content?.[0]?.text).toMatch(
        new RegExp(`^Run ${expected.runId} was interrupted: the server restarted during the run.*call the tool again`),
      );
      expect(answer?.result?._meta?.["slipsnisse.dev/run"], `call ${index}`).toBe(expected.runId);
    }
    expect(await stream(sessionId).cutCalls(user.userId)).toBe(0);
  });

  it("the new stream keeps what the cut one's initialize declared (no second initialize comes): MCP Apps here", async () => {
    const user = member("apps");
    await cutStream(user, [call("cut-1")], "", { protocolVersion: "2025-11-25", capabilities: { extensions: { "io.modelcontextprotocol/ui": {} } } });
    const response = await reconnect(user);
    const reader = response.body?.getReader();
    if (!reader) throw new Error("no stream");
    const decoder = new TextDecoder();
    let text = "";
    const readUntil = async (pattern: RegExp) => {
      for (let reads = 0; reads < 50 && !pattern.test(text); reads++) {
        const { value, done } = await reader.read();
        if (done) break;
        text += decoder.decode(value, { stream: true });
      }
      return pattern.exec(text);
    };
    try {
      const endpoint = (await readUntil(/event: endpoint\ndata: (.+)\n/))?.[1];
      expect(endpoint).toMatch(/\/message\?sessionId=/);
      const posted = await appFetchAs(user, `https://team.example.com${endpoint}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ jsonrpc: "2.0", id: "list-after-reconnect", method: "tools/list" }),
      });
      expect(posted.status).toBe(202);
      const listed = (await readUntil(/data: (.*"list-after-reconnect".*)\n/))?.[1];
      const tools = (JSON.parse(listed ?? "{}") as { result?: { tools?: Array<{ name: string; _meta?: Record<string, unknown> }> } }).result?.tools;
      expect(tools?.[0]?._meta?.ui).toBeDefined();
    } finally {
      await reader.cancel();
    }
  });

  it("a reconnect naming another user's stream (Last-Event-ID) takes nothing over; its owner's reconnect still does", async () => {
    const owner = member("owner");
    const attacker = member("attacker");
    const cut = call("secret-call");
    const sessionId = await cutStream(owner, [cut]);

    const stolen = await reconnect(attacker, { "last-event-id": `${sessionId}:3` });
    expect(stolen.status).toBe(200);
    // open() takes the calls over before it returns the stream: once the endpoint is read, the attempt is over.
    const attackerFrames = await framesOf(stolen, (seen) => seen.length >= 1);
    expect(attackerFrames.map((frame) => frame.event)).toEqual(["endpoint"]);
    expect(await stream(sessionId).cutCalls(owner.userId)).toBe(1);
    // Without Last-Event-ID the attacker's reconnect looks in their own index only.
    await framesOf(await reconnect(attacker), (seen) => seen.length >= 1);
    expect(await stream(sessionId).cutCalls(owner.userId)).toBe(1);

    const own = await framesOf(await reconnect(owner, { "last-event-id": `${sessionId}:3` }), (seen) => messages(seen).length >= 1);
    expect(messages(own)[0]).toMatchObject({ id: "secret-call", result: { isError: true } });
  });

  it("a first GET (no revision yet, no Last-Event-ID) takes nothing over; a reconnect that fits several cut streams takes none", async () => {
    const user = member("ambiguous");
    const first = await cutStream(user, [call(1)]);
    const fresh = await appFetchAs(user, SSE_URL, { headers: { accept: "text/event-stream" } });
    expect((await framesOf(fresh, (seen) => seen.length >= 1)).map((frame) => frame.event)).toEqual(["endpoint"]);
    expect(await stream(first).cutCalls(user.userId)).toBe(1);

    // Two cut streams opened with the same credential: which one this client continues is unknown.
    const second = await cutStream(user, [call(1)]);
    await framesOf(await reconnect(user), (seen) => seen.length >= 1);
    expect(await stream(first).cutCalls(user.userId)).toBe(1);
    expect(await stream(second).cutCalls(user.userId)).toBe(1);
    // A credential tells them apart: the stream opened with another one is not this client's.
    const other = member("other-client");
    await cutStream(other, [call(1)], "digest-of-another-credential");
    const mine = await cutStream(other, [call(2)]);
    const frames = await framesOf(await reconnect(other), (seen) => messages(seen).length >= 1);
    expect(messages(frames)[0]).toMatchObject({ id: 2 });
    expect(await stream(mine).cutCalls(other.userId)).toBe(0);
  });

  it("bounds: a stream remembers its newest calls only, each until its budget plus a minute; an index lists so many streams; the alarm leaves no storage", async () => {
    const user = member("bounds");
    const sessionId = crypto.randomUUID();
    const kept = await runInDurableObject(stream(sessionId), async (_instance, state) => {
      const ledger = new SseCallLedger(state.storage);
      const now = Date.now();
      for (let id = 0; id < MAX_REMEMBERED_CALLS + 8; id++) ledger.record(call(id), { owner: user.userId, client: "" }, now);
      const ids = ledger.cut(user.userId, undefined, now).map((entry) => entry.requestId);
      // The newest call pushes the oldest out; an expired one is not handed over.
      ledger.record(call("late", { expiresAt: now + 1 }), { owner: user.userId, client: "" }, now);
      const afterExpiry = ledger.cut(user.userId, undefined, now + 2).length;
      await state.storage.setAlarm(now + 60_000);
      return { ids, afterExpiry };
    });
    expect(kept.ids).toHaveLength(MAX_REMEMBERED_CALLS);
    expect(kept.ids[0]).toBe(8);
    expect(kept.afterExpiry).toBe(MAX_REMEMBERED_CALLS - 1);

    const listed = await runInDurableObject(indexOf(user), (_instance, state) => {
      const index = new SseStreamIndex(state.storage);
      const now = Date.now();
      for (let n = 0; n < MAX_INDEXED_CONNECTIONS + 4; n++) index.note(`session-${n}`, now + 60_000, now);
      index.note("expired", now + 1, now);
      return index.recent(now + 2);
    });
    // The newest note pushed the oldest out, and has expired itself.
    expect(listed).toHaveLength(MAX_INDEXED_CONNECTIONS - 1);
    expect(listed).not.toContain("session-4");
    expect(listed).toContain("session-5");

    // Every entry expired: the alarm sweeps the ledger away.
    await runInDurableObject(stream(sessionId), (_instance, state) => {
      const ledger = new SseCallLedger(state.storage);
      ledger.clear();
      ledger.record(call("stale", { expiresAt: Date.now() - 1 }), { owner: user.userId, client: "" }, Date.now() - 10);
    });
    expect(await runDurableObjectAlarm(stream(sessionId))).toBe(true);
    const left = await runInDurableObject(stream(sessionId), (_instance, state) => [...state.storage.kv.list()]);
    expect(left).toEqual([]);
  });
});
