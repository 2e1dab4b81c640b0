import { abortAllDurableObjects, createExecutionContext, env, runDurableObjectAlarm, runInDurableObject, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { createApp } from "../../../src/app";
import type { UserProps } from "../../../src/auth/user-props";
import { contextWithProps } from "../../../src/execution-context";
import { runTraceMarkdown } from "../../../src/mcp/server/run-trace-markdown";
import { usage, useCatalogWithScriptedModels } from "../../support/workers/scripted-model";
import { callOf, expertOf, sessionOf } from "../../support/workers/session-helpers";

const skill = "in-flight-alarm";
const TIMEOUT_MS = 120_000;
const nora: UserProps = { userId: "u-inflight-nora", login: "nora", email: "nora@example.com", role: "member" };

async function alarmAt(user: UserProps): Promise<number | null> {
  return runInDurableObject(sessionOf(skill, user), (_instance, state) => state.storage.getAlarm());
}

async function ownRuns(user: UserProps): Promise<Array<{ id: string; outcome: string }>> {
  const ctx = createExecutionContext();
  const response = await createApp().fetch(new Request(`https://team.example.com/me/api/skills/${skill}/runs`), env, contextWithProps(ctx, user));
  await waitOnExecutionContext(ctx);
  expect(response.status).toBe(200);
  return ((await response.json()) as { runs: Array<{ id: string; outcome: string }> }).runs;
}

/** Polls (bounded) until the run's record says it is running. */
async function untilRunning(user: UserProps, runId: string): Promise<void> {
  for (let attempt = 0; attempt < 200; attempt++) {
    if ((await sessionOf(skill, user).run(runId))?.outcome === "running") return;
    await scheduler.wait(10);
  }
  throw new Error(`run ${runId} never started`);
}

/**
 * A restart cuts off a run in flight; the session's constructor closes it and queues its index
 * row, but only when something wakes the object. The alarm a run arms at its start is that
 * something: the interrupted run reaches the index without the user calling again.
 */
describe("a run in flight keeps the session's alarm within its timeout", () => {
  const models = useCatalogWithScriptedModels({
    skills: { [skill]: { experts: [expertOf("waiter", {}, { timeout_ms: TIMEOUT_MS })] } },
  });

  it("a restart mid-run is noticed by the alarm and the run is indexed as interrupted", async () => {
    // The model never answers: the run stays in flight until the restart cuts it off.
    models.play([() => new Promise(() => undefined)]);
    const request = callOf(skill, "waiter", "wait for me", {}, nora);
    const before = Date.now();
    const pending = sessionOf(skill, nora)
      .callExpert(request)
      .catch((error: unknown) => error);
    await untilRunning(nora, request.runId);

    // Armed by the run's start, not a day away (the retention check a fresh session sets).
    const armed = await alarmAt(nora);
    expect(armed).not.toBeNull();
    expect(armed).toBeLessThanOrEqual(Date.now() + TIMEOUT_MS + 60_000);
    expect(armed).toBeGreaterThanOrEqual(before + TIMEOUT_MS);

    await abortAllDurableObjects();
    await pending;
    // No call reaches the session: only its alarm wakes it.
    expect(await runDurableObjectAlarm(sessionOf(skill, nora))).toBe(true);

    const row = await env.DB.prepare("SELECT outcome, user_login FROM run_index WHERE run_id = ?").bind(request.runId).first();
    expect(row).toEqual({ outcome: "interrupted", user_login: "nora" });
    // One name for the outcome: the member's own API says what the index says.
    expect((await ownRuns(nora)).find((run) => run.id === request.runId)).toMatchObject({ outcome: "interrupted" });
    // And so does the run's trace resource (slipsnisse://runs/<id>), read from the same record.
    const record = await sessionOf(skill, nora).run(request.runId);
    expect(record && runTraceMarkdown(record, [])).toContain("**interrupted**");
  });

  it("an alarm while the run is still going keeps one armed for it", async () => {
    let release: (() => void) | undefined;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    models.play([
      async () => {
        await released;
        return { content: [{ type: "text", text: "done" }], finishReason: { unified: "stop", raw: "stop" }, usage: usage(1, 1), warnings: [] };
      },
    ]);
    const omar: UserProps = { userId: "u-inflight-omar", login: "omar", role: "member" };
    const request = callOf(skill, "waiter", "slow", {}, omar);
    const before = Date.now();
    const pending = sessionOf(skill, omar).callExpert(request);
    await untilRunning(omar, request.runId);

    // The alarm comes early (an index flush, a task): it must not put the in-flight check off by a day.
    expect(await runDurableObjectAlarm(sessionOf(skill, omar))).toBe(true);
    const armed = await alarmAt(omar);
    expect(armed).toBeGreaterThanOrEqual(before + TIMEOUT_MS);
    expect(armed).toBeLessThanOrEqual(Date.now() + TIMEOUT_MS + 60_000);

    release?.();
    expect(await pending).toMatchObject({ outcome: "ok", text: "done" });
  });
});
