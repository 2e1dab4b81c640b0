import { abortAllDurableObjects, env, runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, inject, it, vi } from "vitest";
import type { UserProps } from "../../../src/auth/user-props";
import type { ExpertSession } from "../../../src/experts/session/expert-session";
import type { QueuedRun, RunIndexOutbox } from "../../../src/experts/records/run-index-outbox";
import { taggedBase } from "../../fixtures/fixture-stats-client";
import { admin } from "../../admin/admin-test-client";
import { indexRow } from "../../admin/run-index-rows";
import { callOf, expertOf, sessionOf } from "../../support/workers/session-helpers";
import { useCatalogWithScriptedModels } from "../../support/workers/scripted-model";
import { flushRunIndex, TEST_FLUSH_DELAY_MS, withoutTable } from "../../support/workers/run-index-flush";

const DAY = 86_400_000;
const fixtures = inject("fixtureServers");
const echo = taggedBase(fixtures.echo, "outbox");
const skill = "outbox-tests";
const short = "outbox-short";
const erin: UserProps = { userId: "u-outbox-erin", login: "erin", email: "erin@example.com", role: "member" };

const session = (user: UserProps = erin, name = skill) => sessionOf(name, user);
const outboxOf = (instance: ExpertSession) => Reflect.get(instance, "indexOutbox") as RunIndexOutbox;

async function indexed(runId: string): Promise<Record<string, unknown> | null> {
  return env.DB.prepare("SELECT * FROM run_index WHERE run_id = ?").bind(runId).first();
}

async function indexedCalls(runId: string): Promise<unknown[]> {
  return (await env.DB.prepare("SELECT seq, server_id, tool, status FROM run_tool_calls WHERE run_id = ? ORDER BY seq").bind(runId).all()).results;
}

async function waiting(stub = session()): Promise<Array<{ run_id: string; attempts: number; retry_at: number }>> {
  return runInDurableObject(stub, (_instance, state) =>
    state.storage.sql
      .exec<{ run_id: string; attempts: number; retry_at: number }>(`SELECT run_id, attempts, retry_at FROM run_index_outbox ORDER BY seq`)
      .toArray(),
  );
}

async function alarmAt(stub = session()): Promise<number | null> {
  return runInDurableObject(stub, (_instance, state) => state.storage.getAlarm());
}

/** A D1 binding that counts the batches sent through it. */
function countingDb(): { db: D1Database; batches: () => number } {
  let batches = 0;
  const db = new Proxy(env.DB, {
    get(target, key) {
      if (key === "batch") {
        return (statements: D1PreparedStatement[]) => {
          batches++;
          return target.batch(statements);
        };
      }
      const value = Reflect.get(target, key);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { db, batches: () => batches };
}

function entryOf(startedAt: number, calls: number): QueuedRun {
  const row = indexRow({ skill, startedAt, userId: erin.userId, toolCalls: calls });
  return {
    row,
    calls: Array.from({ length: calls }, (_, seq) => ({ server: "echo", tool: `t${seq}`, status: "ok", elapsedMs: 1, bytes: 2, error: null })),
    retries: 0,
  };
}

describe("the run index outbox", () => {
  const models = useCatalogWithScriptedModels({
    skills: {
      [skill]: {
        servers: { echo: { url: `${echo}/mcp`, transport: "streamable-http", headers: { Authorization: "Bearer ${FIXTURE_TOKEN}" } } },
        experts: [{ ...expertOf("echoer", { echo: ["echo"] }), api_key_secret: "FIXTURE_MODEL_KEY" }],
      },
      [short]: { retention_days: 7, experts: [expertOf("answer", {})] },
    },
  });
  afterEach(() => vi.restoreAllMocks());

  it("puts a finished run in run_index and run_tool_calls only when the alarm flushes it", async () => {
    models.play([{ calls: [{ name: "echo__echo", input: { text: "outbox" } }] }, { text: "Echoed." }]);
    const request = callOf(skill, "echoer", "echo please", {}, erin);
    const answeredBefore = Date.now();
    expect((await session().callExpert(request)).outcome).toBe("ok");

    // Answered, and the row waits in the session with the flush due: nothing in D1 yet.
    expect((await waiting()).map((row) => row.run_id)).toContain(request.runId);
    expect(await indexed(request.runId)).toBeNull();
    expect(await indexedCalls(request.runId)).toEqual([]);
    const due = await alarmAt();
    expect(due).toBeGreaterThanOrEqual(answeredBefore + TEST_FLUSH_DELAY_MS);
    expect(due).toBeLessThanOrEqual(Date.now() + TEST_FLUSH_DELAY_MS);

    await flushRunIndex(session());
    expect(await indexed(request.runId)).toMatchObject({
      skill,
      expert: "echoer",
      user_id: erin.userId,
      user_login: "erin",
      outcome: "ok",
      steps: 2,
      tool_calls: 1,
    });
    expect(await indexedCalls(request.runId)).toEqual([{ seq: 0, server_id: "echo", tool: "echo", status: "ok" }]);
    expect(await waiting()).toEqual([]);
    // With nothing waiting, the alarm is the retention check again (at most a day away).
    expect(await alarmAt()).toBeGreaterThan(Date.now() + TEST_FLUSH_DELAY_MS);
  });

  it("writes a burst of runs in one D1 batch", async () => {
    models.play([{ text: "Quick." }]);
    const bob: UserProps = { userId: "u-outbox-bob", login: "bob", role: "member" };
    const runIds: string[] = [];
    for (let i = 0; i < 6; i++) {
      const request = callOf(skill, "echoer", `burst ${i}`, {}, bob);
      runIds.push(request.runId);
      expect((await session(bob).callExpert(request)).outcome).toBe("ok");
    }
    expect(await waiting(session(bob))).toHaveLength(6);
    const { db, batches } = countingDb();
    const count = await runInDurableObject(session(bob), (instance: ExpertSession) => outboxOf(instance).flush(db));
    expect(count).toEqual({ written: 6, waiting: 0 });
    expect(batches()).toBe(1);
    for (const runId of runIds) expect(await indexed(runId)).toMatchObject({ outcome: "ok", user_login: "bob" });
  });

  it("bounds one flush by runs and statements per batch and batches per alarm; the rest goes at the next", async () => {
    const frank: UserProps = { userId: "u-outbox-frank", login: "frank", role: "member" };
    const now = Date.now();
    // 12 tool calls a run: 27 runs make 7 + 33 statements, the most one batch takes (40); 4 batches a flush.
    const entries = Array.from({ length: 230 }, (_, i) => entryOf(now - i, 12));
    const { db, batches } = countingDb();
    const first = await runInDurableObject(session(frank), (instance: ExpertSession) => {
      outboxOf(instance).add(entries, now);
      return outboxOf(instance).flush(db);
    });
    expect(first).toEqual({ written: 108, waiting: 122 });
    expect(batches()).toBe(4);
    // What is left keeps its due time (the delay after it was queued, in production already past).
    expect(await runInDurableObject(session(frank), (instance: ExpertSession) => outboxOf(instance).dueAt())).toBe(now + TEST_FLUSH_DELAY_MS);
    const rest: number[] = [];
    for (let flush = 0; flush < 5 && (rest.at(-1) ?? 1) > 0; flush++) {
      rest.push((await runInDurableObject(session(frank), (instance: ExpertSession) => outboxOf(instance).flush(db))).waiting);
    }
    expect(rest).toEqual([14, 0]);
    const ids = JSON.stringify(entries.map((entry) => entry.row.runId));
    const count = async (table: string) =>
      (await env.DB.prepare(`SELECT count(*) AS n FROM ${table} WHERE run_id IN (SELECT value FROM json_each(?))`).bind(ids).first<{ n: number }>())?.n;
    expect(await count("run_index")).toBe(230);
    expect(await count("run_tool_calls")).toBe(230 * 12);
  });

  it("keeps the rows when a flush fails, backs off, and the next alarm writes them", async () => {
    const errors: string[] = [];
    vi.spyOn(console, "error").mockImplementation((...args: unknown[]) => void errors.push(args.map(String).join(" ")));
    models.play([{ calls: [{ name: "echo__echo", input: { text: "kept" } }] }, { text: "Kept." }]);
    const gail: UserProps = { userId: "u-outbox-gail", login: "gail", email: "gail@example.com", role: "member" };
    const request = callOf(skill, "echoer", "keep me", {}, gail);
    expect((await session(gail).callExpert(request)).outcome).toBe("ok");

    const failedAt = Date.now();
    await withoutTable("run_tool_calls", () => flushRunIndex(session(gail)));
    // The batch is one transaction: its run_index row did not land either.
    expect(await indexed(request.runId)).toBeNull();
    const [kept] = await waiting(session(gail));
    expect(kept).toMatchObject({ run_id: request.runId, attempts: 1 });
    expect(kept?.retry_at).toBeGreaterThanOrEqual(failedAt + 5_000);
    // The alarm stays set for the rows, and not before the backoff has passed (in production the
    // retry time is what sets it; here the test's long flush delay is later still).
    const retryAlarm = await alarmAt(session(gail));
    expect(retryAlarm).toBe(await runInDurableObject(session(gail), (instance: ExpertSession) => outboxOf(instance).dueAt()));
    expect(retryAlarm).toBeGreaterThanOrEqual(kept?.retry_at ?? Number.POSITIVE_INFINITY);
    const line = errors.find((text) => text.includes("run index flush failed"));
    expect(JSON.parse(line ?? "{}")).toMatchObject({ level: "error", runs: 1, waiting: 1, attempts: 1, retryInMs: 5_000 });
    // Counts only: no user's login or email in the log line.
    expect(line).not.toContain("gail");

    // A second failure doubles the wait.
    await withoutTable("run_tool_calls", () => flushRunIndex(session(gail)));
    expect(await waiting(session(gail))).toMatchObject([{ run_id: request.runId, attempts: 2 }]);
    expect(JSON.parse(errors.filter((text) => text.includes("run index flush failed")).at(-1) ?? "{}")).toMatchObject({ attempts: 2, retryInMs: 10_000 });

    await flushRunIndex(session(gail));
    expect(await indexed(request.runId)).toMatchObject({ outcome: "ok", user_email: "gail@example.com" });
    expect(await waiting(session(gail))).toEqual([]);
  });

  it("indexes a run a restart cut off as interrupted", async () => {
    const hank: UserProps = { userId: "u-outbox-hank", login: "hank", email: "hank@example.com", role: "member" };
    const runId = crypto.randomUUID();
    const startedAt = Date.now() - 5_000;
    // Staged as the row a run leaves when its instance dies mid-flight (see test/resilience/session-restart.test.ts).
    await runInDurableObject(session(hank), (_instance, state) => {
      state.storage.sql.exec(
        `INSERT INTO runs (id, skill, expert, user_id, thread_id, catalog_version, provider, model, outcome, started_at, trace_id, caller)
         VALUES (?, ?, 'echoer', ?, NULL, 3, 'openai-compatible', NULL, 'running', ?, 'aaaabbbbccccddddeeeeffff00001111', ?)`,
        runId,
        skill,
        hank.userId,
        startedAt,
        JSON.stringify({ userId: hank.userId, login: "hank", email: "hank@example.com" }),
      );
    });
    await abortAllDurableObjects();

    // The fresh instance closes the run and queues its index row, with the flush due.
    expect(await session(hank).run(runId)).toMatchObject({ outcome: "interrupted", error: expect.stringContaining("restarted") });
    expect((await waiting(session(hank))).map((row) => row.run_id)).toEqual([runId]);
    expect(await alarmAt(session(hank))).toBeLessThanOrEqual(Date.now() + TEST_FLUSH_DELAY_MS);
    expect(await indexed(runId)).toBeNull();

    await flushRunIndex(session(hank));
    const row = await indexed(runId);
    expect(row).toMatchObject({
      skill,
      expert: "echoer",
      user_id: hank.userId,
      user_login: "hank",
      user_email: "hank@example.com",
      catalog_version: 3,
      provider: "openai-compatible",
      // The expert named no model: the provider's default.
      model: "llama3.1",
      outcome: "interrupted",
      trace_id: "aaaabbbbccccddddeeeeffff00001111",
      started_at: startedAt,
      steps: 0,
      tool_calls: 0,
      cost: null,
    });
    expect(row?.ended_at).toBeGreaterThan(startedAt);
    expect(row?.elapsed_ms).toBe(Number(row?.ended_at) - startedAt);
    // And the admin API lists it under its own outcome.
    const listed = await admin("GET", `/runs?skill=${skill}&outcome=interrupted&from=${startedAt}&to=${Date.now() + 1}`);
    expect(listed.status).toBe(200);
    expect((listed.body.runs as Array<{ id: string }>).map((run) => run.id)).toContain(runId);
  });

  it("one alarm flushes and purges: retention goes on beside the outbox", async () => {
    models.play([{ text: "an answer" }]);
    const ida: UserProps = { userId: "u-outbox-ida", login: "ida", role: "member" };
    const old = callOf(short, "answer", "old", {}, ida);
    const fresh = callOf(short, "answer", "fresh", {}, ida);
    await session(ida, short).callExpert(old);
    await session(ida, short).callExpert(fresh);
    await runInDurableObject(session(ida, short), (_instance, state) => {
      const at = Date.now() - 10 * DAY;
      state.storage.sql.exec(`UPDATE runs SET started_at = ?, ended_at = ? WHERE id = ?`, at, at, old.runId);
    });
    // Both runs' rows wait; the alarm is the flush's, a day or more before retention's.
    expect(await waiting(session(ida, short))).toHaveLength(2);

    await flushRunIndex(session(ida, short));
    // Flushed first (both rows in the index), then purged (the old run's trace is gone).
    expect(await indexed(old.runId)).toMatchObject({ outcome: "ok" });
    expect(await indexed(fresh.runId)).toMatchObject({ outcome: "ok" });
    expect(await session(ida, short).run(old.runId)).toBeNull();
    expect(await session(ida, short).run(fresh.runId)).not.toBeNull();
    expect(await waiting(session(ida, short))).toEqual([]);
    // Re-armed for retention: the remaining run expires in 7 days, so a day from now (the cap).
    const next = await alarmAt(session(ida, short));
    expect(next).toBeGreaterThan(Date.now() + DAY - 60_000);
    expect(next).toBeLessThanOrEqual(Date.now() + DAY);

    // The next flush alarms come before that: they write the index and leave the purge to its time.
    const later = callOf(short, "answer", "later", {}, ida);
    await session(ida, short).callExpert(later);
    await runInDurableObject(session(ida, short), (_instance, state) => {
      state.storage.sql.exec(`UPDATE runs SET started_at = ? WHERE id = ?`, Date.now() - 10 * DAY, fresh.runId);
    });
    await flushRunIndex(session(ida, short));
    expect(await indexed(later.runId)).toMatchObject({ outcome: "ok" });
    expect(await session(ida, short).run(fresh.runId)).not.toBeNull();
    expect(await alarmAt(session(ida, short))).toBe(next);
  });

  it("drops an index row still unwritten when its run passes retention, and says so", async () => {
    const errors: string[] = [];
    vi.spyOn(console, "error").mockImplementation((...args: unknown[]) => void errors.push(args.map(String).join(" ")));
    const jo: UserProps = { userId: "u-outbox-jo", login: "jo", role: "member" };
    const now = Date.now();
    const stale = entryOf(now - 8 * DAY, 0);
    const young = entryOf(now - DAY, 0);
    await runInDurableObject(session(jo, short), (instance: ExpertSession) => outboxOf(instance).add([stale, young], now));
    // D1 is down the whole time: the flush fails, then the purge drops only what retention would have swept.
    const purged = await withoutTable("run_index", async () => {
      await flushRunIndex(session(jo, short));
      return (await waiting(session(jo, short))).map((row) => row.run_id);
    });
    expect(purged).toEqual([young.row.runId]);
    expect(errors.some((text) => text.includes("run index rows dropped unwritten: past retention") && text.includes('"runs":1'))).toBe(true);
  });

  it("writes an entry queued before the budget and refused-call columns existed, as no budget and no refusals", async () => {
    const kim: UserProps = { userId: "u-outbox-kim", login: "kim", role: "member" };
    const entry = entryOf(Date.now() - 1_000, 0);
    const { budgetExhausted: _budget, refusedCalls: _refused, ...oldRow } = entry.row;
    await runInDurableObject(session(kim, short), (instance: ExpertSession, state) => {
      outboxOf(instance).add([entry], Date.now());
      // As a session deployed before migrations/0005 queued it: without the two fields.
      state.storage.sql.exec(`UPDATE run_index_outbox SET entry = ? WHERE run_id = ?`, JSON.stringify({ ...entry, row: oldRow }), entry.row.runId);
      return state.storage.setAlarm(Date.now());
    });
    await flushRunIndex(session(kim, short));
    expect(await indexed(entry.row.runId)).toMatchObject({ budget_exhausted: null, refused_calls: 0, outcome: "ok" });
  });
});
