import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { HEARTBEAT_MS } from "../../../src/experts/protocol/task-store";
import { usage, useCatalogWithScriptedModels } from "../../support/workers/scripted-model";
import { callOf, expertOf, sessionOf } from "../../support/workers/session-helpers";
import { waitFor } from "../../support/wait-for";

const skill = "task-alarm";

/** The session's one alarm serves retention and tasks: it is set to the earliest due of both. */
describe("ExpertSession tasks and its alarm", () => {
  const models = useCatalogWithScriptedModels({ skills: { [skill]: { experts: [expertOf("notes", {})] } } });

  it("a running task keeps the alarm close (retention does not push it a day away); an ended one is dropped at its ttl", async () => {
    let release = () => {};
    const released = new Promise<void>((resolve) => (release = resolve));
    models.play([
      async () => {
        await released;
        return { content: [{ type: "text", text: "done" }], finishReason: { unified: "stop", raw: "stop" }, usage: usage(1, 1), warnings: [] };
      },
    ]);
    const session = sessionOf(skill);
    const taskId = crypto.randomUUID();
    const before = Date.now();
    await session.startTask(taskId, callOf(skill, "notes", "hold on"), false, 60_000);
    // Retention sets the alarm for a day away on its own; with a task running it must stay near.
    await session.purgeExpired();
    const alarm = await runInDurableObject(session, (_instance, state) => state.storage.getAlarm());
    expect(alarm).not.toBeNull();
    expect(alarm as number).toBeLessThanOrEqual(Date.now() + HEARTBEAT_MS);
    expect(alarm as number).toBeGreaterThanOrEqual(before);

    release();
    await waitFor("the task to complete", async () => ((await session.task(taskId))?.status === "completed" ? true : undefined), 5_000, 20);
    await session.purgeExpired();
    // Now the earliest due is the task's expiry (within its 60 s ttl), not retention's day.
    const next = await runInDurableObject(session, (_instance, state) => state.storage.getAlarm());
    expect(next as number).toBeLessThanOrEqual(before + 60_000 + 1_000);

    // Past its ttl the alarm drops it.
    await runInDurableObject(session, (_instance, state) =>
      state.storage.sql.exec(`UPDATE tasks SET expires_at = ? WHERE task_id = ?`, Date.now() - 1, taskId),
    );
    await runInDurableObject(session, (_instance, state) => state.storage.setAlarm(Date.now()));
    expect(await runDurableObjectAlarm(session)).toBe(true);
    expect(await session.task(taskId)).toBeNull();
  });

  it("deleting a task's run (a member's DELETE /me/api/…/runs/:id) deletes the task with its arguments and result", async () => {
    models.play([{ text: "done" }]);
    const session = sessionOf(skill);
    const taskId = crypto.randomUUID();
    const call = callOf(skill, "notes", "private words");
    await session.startTask(taskId, call, false, 60_000);
    await waitFor("the task to complete", async () => ((await session.task(taskId))?.status === "completed" ? true : undefined), 5_000, 20);
    const stored = () =>
      runInDurableObject(session, (_instance, state) => state.storage.sql.exec(`SELECT count(*) AS n FROM tasks WHERE task_id = ?`, taskId).one().n);
    expect(await stored()).toBe(1);
    expect(await session.deleteRun(call.runId)).toBe(true);
    expect(await stored()).toBe(0);
    expect(await session.task(taskId)).toBeNull();
  });
});
