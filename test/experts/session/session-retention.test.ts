import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { UserProps } from "../../../src/auth/user-props";
import { callOf, expertOf, sessionOf } from "../../support/workers/session-helpers";
import { useCatalogWithScriptedModels } from "../../support/workers/scripted-model";
import { flushRunIndex } from "../../support/workers/run-index-flush";

const DAY = 86_400_000;
const dora: UserProps = { userId: "u-retention-dora", login: "dora", role: "member" };

/** Moves a run (and its thread) back in time, as if it had happened `daysAgo` days before now. */
async function age(skill: string, runId: string, daysAgo: number): Promise<void> {
  await runInDurableObject(sessionOf(skill, dora), (_instance, state) => {
    const at = Date.now() - daysAgo * DAY;
    state.storage.sql.exec(`UPDATE runs SET started_at = ?, ended_at = ? WHERE id = ?`, at, at, runId);
    state.storage.sql.exec(`UPDATE threads SET created_at = ?, updated_at = ? WHERE id = (SELECT thread_id FROM runs WHERE id = ?)`, at, at, runId);
  });
}

async function counts(skill: string): Promise<{ runs: number; steps: number; threads: number; turns: number; paused: number }> {
  return runInDurableObject(sessionOf(skill, dora), (_instance, state) => {
    const n = (table: string) => state.storage.sql.exec<{ n: number }>(`SELECT count(*) AS n FROM ${table}`).one().n;
    return { runs: n("runs"), steps: n("run_steps"), threads: n("threads"), turns: n("thread_turns"), paused: n("paused_runs") };
  });
}

/** A question the run's thread waits on (as an ask_back expert leaves it), to see it expire with the thread. */
async function pauseOn(skill: string, runId: string): Promise<void> {
  await runInDurableObject(sessionOf(skill, dora), (_instance, state) => {
    state.storage.sql.exec(
      `INSERT INTO paused_runs (thread_id, run_id, expert, state, paused_at, expires_at) SELECT thread_id, id, expert, '{}', started_at, started_at FROM runs WHERE id = ?`,
      runId,
    );
  });
}

describe("session retention", () => {
  const models = useCatalogWithScriptedModels({
    skills: {
      "retention-default": { experts: [expertOf("answer", {})] },
      "retention-short": { retention_days: 7, experts: [expertOf("answer", {})] },
    },
  });

  it("deletes runs and threads older than the skill's retention_days, and nothing younger", async () => {
    models.play([{ text: "an answer" }]);
    const session = sessionOf("retention-short", dora);
    const old = callOf("retention-short", "answer", "old", {}, dora);
    const recent = callOf("retention-short", "answer", "recent", {}, dora);
    await session.callExpert(old);
    await session.callExpert(recent);
    await age("retention-short", old.runId, 8);
    await age("retention-short", recent.runId, 6);
    await pauseOn("retention-short", old.runId);

    expect(await session.purgeExpired(Date.now())).toEqual({ runs: 1, threads: 1 });
    expect(await session.run(old.runId)).toBeNull();
    expect(await session.run(recent.runId)).not.toBeNull();
    expect(await counts("retention-short")).toMatchObject({ runs: 1, steps: 1, threads: 1, paused: 0 });
    // The next alarm is when the remaining run expires (1 day from now), never later than a day.
    const alarm = await runInDurableObject(session, (_instance, state) => state.storage.getAlarm());
    expect(alarm).not.toBeNull();
    expect(alarm ?? 0).toBeLessThanOrEqual(Date.now() + DAY);

    // Injected clock: two more days on, the other run is past 7 days too.
    expect(await session.purgeExpired(Date.now() + 2 * DAY)).toEqual({ runs: 1, threads: 1 });
    expect(await counts("retention-short")).toEqual({ runs: 0, steps: 0, threads: 0, turns: 0, paused: 0 });
    // The two runs' index rows still wait for the flush (the purge never drops them unwritten),
    // so the alarm stays; once they are written, an empty session has none.
    expect(await runInDurableObject(session, (_instance, state) => state.storage.getAlarm())).not.toBeNull();
    await flushRunIndex(session);
    expect(await env.DB.prepare(`SELECT count(*) AS n FROM run_index WHERE run_id IN (?, ?)`).bind(old.runId, recent.runId).first("n")).toBe(2);
    expect(await runInDurableObject(session, (_instance, state) => state.storage.getAlarm())).toBeNull();
  });

  it("keeps 30 days by default", async () => {
    models.play([{ text: "an answer" }]);
    const session = sessionOf("retention-default", dora);
    const month = callOf("retention-default", "answer", "a month ago", {}, dora);
    const weeks = callOf("retention-default", "answer", "29 days ago", {}, dora);
    await session.callExpert(month);
    await session.callExpert(weeks);
    await age("retention-default", month.runId, 31);
    await age("retention-default", weeks.runId, 29);
    expect(await session.purgeExpired(Date.now())).toEqual({ runs: 1, threads: 1 });
    expect(await session.run(weeks.runId)).not.toBeNull();
  });

  it("the alarm runs the purge", async () => {
    models.play([{ text: "an answer" }]);
    const session = sessionOf("retention-short", dora);
    const old = callOf("retention-short", "answer", "old", {}, dora);
    await session.callExpert(old);
    await age("retention-short", old.runId, 10);
    await runInDurableObject(session, (instance) => instance.alarm());
    expect(await session.run(old.runId)).toBeNull();
  });

  it("a member deletes one of their threads and one of their runs", async () => {
    models.play([{ text: "an answer" }]);
    const session = sessionOf("retention-default", dora);
    const first = await session.callExpert(callOf("retention-default", "answer", "first", {}, dora));
    const threads = await session.threadList();
    expect(threads.map((thread) => thread.id)).toContain(first.thread);
    expect(await session.deleteThread(first.thread ?? "")).toBe(true);
    expect((await session.threadList()).map((thread) => thread.id)).not.toContain(first.thread);
    expect(await session.deleteThread(first.thread ?? "")).toBe(false);
    expect(await session.deleteRun(first.runId)).toBe(true);
    expect(await session.run(first.runId)).toBeNull();
  });
});
