import { abortAllDurableObjects, env, runInDurableObject } from "cloudflare:test";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { replaceCatalog } from "../../src/catalog/catalog-service";
import { setModelResolverForTests } from "../../src/experts/models/model-resolver-override";
import { scriptedModel } from "../support/workers/scripted-model";
import { callOf, expertOf, sessionOf } from "../support/workers/session-helpers";

const skill = "restart-tests";

/**
 * A Durable Object restart (eviction after idling, a deploy, a crash) between or during calls:
 * threads, run records and the catalog live in SQLite/D1, so nothing the user had is lost, and
 * a run cut off mid-flight is closed with an outcome instead of staying "running" forever.
 */
describe("ExpertSession across restarts", () => {
  let model = scriptedModel([{ text: "unused" }]);
  beforeAll(async () => {
    const saved = await replaceCatalog(env, { skills: { [skill]: { experts: [expertOf("notes", {})] } } }, "test");
    expect(saved.ok).toBe(true);
    setModelResolverForTests(() => model);
  });
  afterAll(() => setModelResolverForTests(undefined));

  it("a restarted session continues the thread and still has the earlier run", async () => {
    model = scriptedModel([{ text: "Noted: the code word is quince." }]);
    const first = callOf(skill, "notes", "Remember the code word quince.");
    const answer = await sessionOf(skill).callExpert(first);
    expect(answer.outcome).toBe("ok");

    // evictDurableObject (the graceful eviction) crashes workerd in @cloudflare/vitest-plugin
    // 1.4.10 ("Promise callback destroyed itself"); abortAllDurableObjects restarts every object
    // the same way a deploy or crash does, keeping storage.
    await abortAllDurableObjects();
    // A fresh instance: in-memory state (pool, in-flight map) is gone.
    expect(await runInDurableObject(sessionOf(skill), (instance) => Reflect.get(instance, "pool"))).toBeNull();

    model = scriptedModel([{ text: "It was quince." }]);
    const second = await sessionOf(skill).callExpert(callOf(skill, "notes", "Which code word?", { thread: answer.thread }));
    expect(second).toMatchObject({ outcome: "ok", thread: answer.thread, text: "It was quince." });
    const prompt = JSON.stringify(model.doGenerateCalls[0]?.prompt);
    expect(prompt).toContain("Remember the code word quince.");
    expect(prompt).toContain("Noted: the code word is quince.");
    // (The record of a run that opened a thread has threadId null: the session mints the thread
    // after inserting the run row. Reported to the lead; the thread itself is intact.)
    expect(await sessionOf(skill).run(first.runId)).toMatchObject({ id: first.runId, outcome: "ok", userId: "u-carol" });
  });

  /**
   * Aborting objects while a test holds an RPC into one crashes workerd in this plugin version
   * ("Promise callback destroyed itself"), so the cut-off run is staged as the row a run leaves
   * behind when its instance dies mid-flight: inserted "running", never finished.
   */
  it("a run a restart cut off is closed as interrupted, not left running", async () => {
    const runId = crypto.randomUUID();
    await runInDurableObject(sessionOf(skill), (_instance, state) => {
      stageCutRun(state.storage.sql, runId);
    });
    expect(await sessionOf(skill).run(runId)).toMatchObject({ outcome: "running" });
    await abortAllDurableObjects();
    const record = await sessionOf(skill).run(runId);
    expect(record).toMatchObject({ outcome: "interrupted", error: expect.stringContaining("restarted") });
    expect(record?.endedAt).toEqual(expect.any(Number));
    model = scriptedModel([{ text: "Back." }]);
    expect(await sessionOf(skill).callExpert(callOf(skill, "notes", "Still there?"))).toMatchObject({ outcome: "ok", text: "Back." });
  });

  /**
   * A 2025-11-25 call's stream whose run a restart cut off (staged as above, with the stream's
   * durable record the session writes when the call starts): a resume with Last-Event-ID gets
   * the run's outcome at once, for the client's original request id.
   */
  it("a resume of a stream whose run a restart cut off gets the interrupted outcome, not nothing", async () => {
    const runId = crypto.randomUUID();
    const streamId = crypto.randomUUID();
    await runInDurableObject(sessionOf(skill), (_instance, state) => {
      stageCutRun(state.storage.sql, runId);
      state.storage.sql.exec(
        `INSERT INTO call_streams (id, run_id, request_id, progress_token, structured_expected, opened_at, deadline_at) VALUES (?, ?, '5', '"tok"', 0, ?, ?)`,
        streamId,
        runId,
        Date.now(),
        Date.now() + 60_000,
      );
    });
    await abortAllDurableObjects();
    const replay = await sessionOf(skill).resumeStream(streamId, 2, 30_000, "reader");
    expect(replay?.ref).toMatchObject({ requestId: 5, progressToken: "tok" });
    expect(replay?.result).toMatchObject({ seq: 3, result: { runId, outcome: "error", text: expect.stringContaining(`Run ${runId} was interrupted`) } });
  });

  it("run records of every outcome survive a restart", async () => {
    const before = await sessionOf(skill).recentRuns(200);
    await abortAllDurableObjects();
    const after = await sessionOf(skill).recentRuns(200);
    expect(after).toEqual(before);
    expect(new Set(after.map((run) => run.outcome))).toEqual(new Set(["ok", "interrupted"]));
  });
});

/** The row a run leaves behind when its instance dies mid-flight: inserted "running", never finished. */
function stageCutRun(sql: SqlStorage, runId: string): void {
  sql.exec(
    `INSERT INTO runs (id, skill, expert, user_id, thread_id, catalog_version, provider, model, outcome, started_at)
     VALUES (?, ?, 'notes', 'u-carol', NULL, 1, 'openai-compatible', NULL, 'running', ?)`,
    runId,
    skill,
    Date.now(),
  );
}
