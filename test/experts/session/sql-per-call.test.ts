import { runInDurableObject } from "cloudflare:test";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ExpertSession } from "../../../src/experts/session/expert-session";
import { setRunIndexFlushDelayForTests } from "../../../src/experts/records/run-index-outbox";
import { holdRunIndexFlushForTests } from "../../support/workers/run-index-flush";
import { useCatalogWithScriptedModels } from "../../support/workers/scripted-model";
import { callOf, expertOf, sessionOf } from "../../support/workers/session-helpers";

const SKILL = "sql-per-call";

/**
 * The session's SQLite on a call's path: each statement costs CPU on every call (the bench's
 * profile put `exec` first among the session's own costs). While calls keep coming, the index
 * flush a second after the last run is always pending; a call then writes its records and reads
 * nothing, in particular not the four tables the alarm's next time is computed from.
 */
describe("SQLite statements of a warm call", () => {
  const models = useCatalogWithScriptedModels({ skills: { [SKILL]: { servers: {}, experts: [expertOf("answer", {})] } } });
  // The flush due before the runs' in-flight checks (as in production: a second against the timeout).
  beforeAll(() => setRunIndexFlushDelayForTests(20_000));
  afterAll(() => holdRunIndexFlushForTests());

  it("while the index flush is pending, writes the run, its step, its thread and its index row, six statements, and reads nothing, not even the alarm", async () => {
    const session = sessionOf(SKILL);
    models.play([{ text: "warm" }]);
    await session.callExpert(callOf(SKILL, "answer", "warm"));
    const seen: string[] = [];
    const alarmReads: number[] = [];
    await runInDurableObject(session, async (_instance: ExpertSession, state) => {
      const getAlarm = state.storage.getAlarm.bind(state.storage);
      state.storage.getAlarm = (options) => {
        alarmReads.push(Date.now());
        return getAlarm(options);
      };
      const sql = state.storage.sql;
      const exec = sql.exec.bind(sql);
      sql.exec = ((query: string, ...binds: unknown[]) => {
        seen.push(query.replace(/\s+/g, " ").trim());
        return exec(query, ...binds);
      }) as typeof sql.exec;
    });
    models.play([{ text: "First." }]);
    expect((await session.callExpert(callOf(SKILL, "answer", "one"))).outcome).toBe("ok");
    const verbs = seen.map((query) => query.split(" ").slice(0, 3).join(" "));
    expect(verbs.filter((verb) => verb.startsWith("SELECT"))).toEqual([]);
    expect(verbs).toEqual(
      expect.arrayContaining(["INSERT INTO threads", "INSERT INTO runs", "UPDATE runs SET", "INSERT OR REPLACE", "INSERT INTO thread_turns"]),
    );
    // A new thread's row is written once, with its first turns, not inserted at the start and updated at the end.
    expect(verbs.filter((verb) => verb.startsWith("INSERT INTO threads"))).toHaveLength(1);
    expect(verbs.filter((verb) => verb.startsWith("UPDATE threads"))).toEqual([]);
    expect(seen.length).toBeLessThanOrEqual(6);
    // The alarm's time is known from the call before (session-alarm.ts): no storage read for it.
    expect(alarmReads).toEqual([]);
  });
});
