import { abortAllDurableObjects, env, runInDurableObject } from "cloudflare:test";
import { beforeEach, describe, expect, it } from "vitest";
import type { UserProps } from "../../../src/auth/user-props";
import { skillLimitsSchema } from "../../../src/catalog/catalog-schema";
import { UsageLimitReachedError } from "../../../src/experts/limits/limit-errors";
import { reserveRun, settleRun } from "../../../src/experts/limits/usage-counters";
import { callOf, expertOf, sessionOf } from "../../support/workers/session-helpers";
import { waitFor } from "../../support/wait-for";
import { useCatalogWithScriptedModels } from "../../support/workers/scripted-model";

async function inFlight(subject: string): Promise<number | undefined> {
  const row = await env.DB.prepare("SELECT in_flight FROM usage_counters WHERE subject = ?").bind(subject).first<{ in_flight: number }>();
  return row?.in_flight;
}

const alice: UserProps = { userId: "u-limit-alice", login: "alice", role: "member" };
const bob: UserProps = { userId: "u-limit-bob", login: "bob", role: "member" };
const answerer = expertOf("answer", {});

describe("usage limits", () => {
  const models = useCatalogWithScriptedModels({
    skills: {
      "limit-user-runs": { limits: { per_user: { runs_per_day: 1 } }, experts: [answerer] },
      "limit-skill-runs": { limits: { per_skill: { runs_per_day: 1 } }, experts: [answerer] },
      "limit-tokens": { limits: { per_user: { tokens_per_day: 20 } }, experts: [answerer] },
      "limit-in-flight": { limits: { per_user: { runs_in_flight: 1 } }, experts: [answerer] },
      "limit-none": { experts: [answerer] },
    },
  });

  beforeEach(async () => {
    await env.DB.exec("DELETE FROM usage_counters");
  });

  it("refuses the run over a per-user daily limit with its name, value and reset, and never calls the model", async () => {
    const model = models.play([{ text: "first answer" }]);
    const first = await sessionOf("limit-user-runs", alice).callExpert(callOf("limit-user-runs", "answer", "one", {}, alice));
    expect(first).toMatchObject({ outcome: "ok", text: "first answer" });
    expect(model.doGenerateCalls).toHaveLength(1);

    const second = await sessionOf("limit-user-runs", alice).callExpert(callOf("limit-user-runs", "answer", "two", {}, alice));
    expect(second.outcome).toBe("error");
    const midnight = new Date(Math.floor(Date.now() / 86_400_000) * 86_400_000 + 86_400_000).toISOString();
    expect(second.text).toContain(`your runs_per_day in skill "limit-user-runs" is 1 (used 1); it resets at ${midnight}`);
    expect(second.text).toContain("limits.per_user.runs_per_day");
    expect(second.thread).toBeUndefined();
    expect(model.doGenerateCalls).toHaveLength(1);
    // No run was recorded for the refused call: nothing was spent.
    expect(await sessionOf("limit-user-runs", alice).recentRuns(10)).toHaveLength(1);

    // Another user has their own per-user counter.
    expect(await sessionOf("limit-user-runs", bob).callExpert(callOf("limit-user-runs", "answer", "one", {}, bob))).toMatchObject({ outcome: "ok" });
  });

  it("two users racing for the skill's last run: exactly one runs, the model is called once", async () => {
    const model = models.play([{ text: "raced answer" }]);
    const results = await Promise.all(
      [alice, bob].map((user) => sessionOf("limit-skill-runs", user).callExpert(callOf("limit-skill-runs", "answer", "race", {}, user))),
    );
    expect(results.map((result) => result.outcome).sort()).toEqual(["error", "ok"]);
    expect(results.find((result) => result.outcome === "error")?.text).toContain(
      `this skill's (all users together) runs_per_day in skill "limit-skill-runs" is 1 (used 1)`,
    );
    expect(model.doGenerateCalls).toHaveLength(1);
    const row = await env.DB.prepare("SELECT runs, in_flight FROM usage_counters WHERE subject = 'skill:limit-skill-runs'").first();
    expect(row).toEqual({ runs: 1, in_flight: 0 });
  });

  it("counts tokens when a run ends and refuses the next run once the day's tokens are used", async () => {
    const model = models.play([{ text: "long answer", outputTokens: 15 }]);
    expect(await sessionOf("limit-tokens", alice).callExpert(callOf("limit-tokens", "answer", "one", {}, alice))).toMatchObject({ outcome: "ok" });
    // 10 input + 15 output tokens: past the limit of 20.
    const refused = await sessionOf("limit-tokens", alice).callExpert(callOf("limit-tokens", "answer", "two", {}, alice));
    expect(refused.text).toContain(`your tokens_per_day in skill "limit-tokens" is 20 (used 25)`);
    expect(model.doGenerateCalls).toHaveLength(1);
  });

  it("refuses a second run while one is in flight, and frees the slot when it ends", async () => {
    // The first run's model answers only when the run is cancelled (a promise of the test's
    // context cannot be awaited inside the Durable Object).
    const model = models.play([
      (options) =>
        new Promise((_resolve, reject) => {
          options.abortSignal?.addEventListener("abort", () => reject(options.abortSignal?.reason));
        }),
      { text: "third answer" },
    ]);
    const session = sessionOf("limit-in-flight", alice);
    const slowCall = callOf("limit-in-flight", "answer", "slow", {}, alice);
    const slow = session.callExpert(slowCall);
    await waitFor("the first run to hold its in-flight slot", async () => (await inFlight("user:limit-in-flight:u-limit-alice")) === 1);
    const refused = await session.callExpert(callOf("limit-in-flight", "answer", "second", {}, alice));
    expect(refused.text).toContain(`your runs_in_flight in skill "limit-in-flight" is 1 (used 1); it frees up as soon as one of the runs in flight ends`);
    expect(model.doGenerateCalls).toHaveLength(1);
    expect(await session.cancel(slowCall.runId)).toBe(true);
    expect((await slow).outcome).toBe("cancelled");
    expect(await inFlight("user:limit-in-flight:u-limit-alice")).toBe(0);
    expect(await session.callExpert(callOf("limit-in-flight", "answer", "third", {}, alice))).toMatchObject({ outcome: "ok", text: "third answer" });
    expect(model.doGenerateCalls).toHaveLength(2);
  });

  it("a restart frees the in-flight slot of a run it cut off", async () => {
    // Staged as the run leaves it (aborting an object while a test holds an RPC into it crashes
    // workerd in this plugin version): its slot reserved in D1 and its reservation in the session.
    const limits = skillLimitsSchema.parse({ per_user: { runs_in_flight: 1 } });
    const reservation = await reserveRun(env.DB, "limit-in-flight", alice.userId, limits, Date.now());
    await runInDurableObject(sessionOf("limit-in-flight", alice), (_instance, state) =>
      state.storage.kv.put(`limit-reservation:${crypto.randomUUID()}`, reservation),
    );
    expect(await inFlight("user:limit-in-flight:u-limit-alice")).toBe(1);
    await abortAllDurableObjects();
    models.play([{ text: "after the restart" }]);
    const result = await sessionOf("limit-in-flight", alice).callExpert(callOf("limit-in-flight", "answer", "again", {}, alice));
    expect(result).toMatchObject({ outcome: "ok", text: "after the restart" });
    expect(await inFlight("user:limit-in-flight:u-limit-alice")).toBe(0);
  });

  it("a skill without limits writes no counters", async () => {
    models.play([{ text: "free" }]);
    expect(await sessionOf("limit-none", alice).callExpert(callOf("limit-none", "answer", "one", {}, alice))).toMatchObject({ outcome: "ok" });
    expect((await env.DB.prepare("SELECT count(*) AS n FROM usage_counters").first())?.n).toBe(0);
  });

  it("of concurrent reservations for the last units exactly as many pass as the limit allows", async () => {
    const limits = skillLimitsSchema.parse({ per_user: { runs_per_day: 3 }, per_skill: { runs_in_flight: 5 } });
    const now = Date.UTC(2026, 10, 23, 12);
    const attempts = await Promise.allSettled(Array.from({ length: 8 }, () => reserveRun(env.DB, "race", "u-1", limits, now)));
    const passed = attempts.filter((attempt) => attempt.status === "fulfilled");
    expect(passed).toHaveLength(3);
    for (const attempt of attempts) if (attempt.status === "rejected") expect(attempt.reason).toBeInstanceOf(UsageLimitReachedError);
    // The refused ones undid nothing they did not take: the skill row counts only the 3.
    const skillRow = await env.DB.prepare("SELECT runs, in_flight FROM usage_counters WHERE subject = 'skill:race'").first();
    expect(skillRow).toEqual({ runs: 3, in_flight: 3 });
    for (const attempt of passed) {
      if (attempt.status === "fulfilled" && attempt.value) await settleRun(env.DB, attempt.value, 7, 0, now);
    }
    const userRow = await env.DB.prepare("SELECT runs, tokens, in_flight FROM usage_counters WHERE subject = 'user:race:u-1'").first();
    expect(userRow).toEqual({ runs: 3, tokens: 21, in_flight: 0 });
  });

  it("a limit of 0 refuses every run", async () => {
    const limits = skillLimitsSchema.parse({ per_user: { runs_per_day: 0 } });
    await expect(reserveRun(env.DB, "zero", "u-1", limits, Date.now())).rejects.toMatchObject({ kind: "usage-limit-reached", limit: "runs_per_day", value: 0 });
  });
});
