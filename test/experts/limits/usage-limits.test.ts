import { abortAllDurableObjects, env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { beforeEach, describe, expect, it } from "vitest";
import type { UserProps } from "../../../src/auth/user-props";
import { usageLimitsSchema } from "../../../src/catalog/catalog-schema";
import { LimitCounters } from "../../../src/experts/limits/limit-counters";
import { RESERVATION_PREFIX } from "../../../src/experts/limits/run-limits";
import { skillLimiterStub } from "../../../src/experts/limits/skill-limiter";
import { type CounterRow, userSubject, utcDay } from "../../../src/experts/limits/usage-counters";
import { callOf, expertOf, sessionOf } from "../../support/workers/session-helpers";
import { waitFor } from "../../support/wait-for";
import { useCatalogWithScriptedModels } from "../../support/workers/scripted-model";

/** The user's counters of today, as their session holds them (limit-counters.ts). */
async function userRow(skill: string, user: UserProps): Promise<CounterRow> {
  return runInDurableObject(sessionOf(skill, user), (_instance, state) =>
    new LimitCounters(state.storage.sql).row(userSubject(skill, user.userId), utcDay(Date.now())),
  );
}

async function inFlight(skill: string, user: UserProps): Promise<number> {
  return (await userRow(skill, user)).in_flight;
}

async function skillRow(skill: string): Promise<CounterRow> {
  return skillLimiterStub(env, skill).row(skill, utcDay(Date.now()));
}

/** The skill's row once every ended run has settled there (the session sends the settle without waiting for it). */
async function settledSkillRow(skill: string): Promise<CounterRow> {
  return waitFor(`the runs of ${skill} settled in its limiter`, async () => {
    const row = await skillRow(skill);
    return row.in_flight === 0 ? row : undefined;
  });
}

async function d1Row(subject: string) {
  return env.DB.prepare("SELECT runs, tokens, in_flight FROM usage_counters WHERE subject = ?").bind(subject).first();
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
      "limit-zero": { limits: { per_user: { runs_per_day: 0 } }, experts: [answerer] },
      "limit-skill-in-flight": { limits: { per_skill: { runs_in_flight: 1 } }, experts: [answerer] },
      "race-user": { limits: { per_user: { runs_per_day: 3 }, per_skill: { runs_in_flight: 5 } }, experts: [answerer] },
      "race-skill": { limits: { per_skill: { runs_per_day: 3 } }, experts: [answerer] },
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
    expect(await settledSkillRow("limit-skill-runs")).toMatchObject({ runs: 1, in_flight: 0 });
    // D1 gets the skill's counters from the limiter's alarm, for the admin's usage pages.
    expect(await runDurableObjectAlarm(skillLimiterStub(env, "limit-skill-runs"))).toBe(true);
    expect(await d1Row("skill:limit-skill-runs")).toMatchObject({ runs: 1, in_flight: 0 });
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
    await waitFor("the first run to hold its in-flight slot", async () => (await inFlight("limit-in-flight", alice)) === 1);
    const refused = await session.callExpert(callOf("limit-in-flight", "answer", "second", {}, alice));
    expect(refused.text).toContain(`your runs_in_flight in skill "limit-in-flight" is 1 (used 1); it frees up as soon as one of the runs in flight ends`);
    expect(model.doGenerateCalls).toHaveLength(1);
    expect(await session.cancel(slowCall.runId)).toBe(true);
    expect((await slow).outcome).toBe("cancelled");
    expect(await inFlight("limit-in-flight", alice)).toBe(0);
    expect(await session.callExpert(callOf("limit-in-flight", "answer", "third", {}, alice))).toMatchObject({ outcome: "ok", text: "third answer" });
    expect(model.doGenerateCalls).toHaveLength(2);
  });

  it("a restart frees the in-flight slot of a run it cut off", async () => {
    // Staged as the run leaves it (aborting an object while a test holds an RPC into it crashes
    // workerd in this plugin version): its slot reserved in the session's counters.
    const limits = usageLimitsSchema.parse({ runs_in_flight: 1 });
    await runInDurableObject(sessionOf("limit-in-flight", alice), (_instance, state) => {
      const subject = { scope: "per_user" as const, key: userSubject("limit-in-flight", alice.userId), limits };
      expect(new LimitCounters(state.storage.sql).reserve(crypto.randomUUID(), subject, utcDay(Date.now()), Date.now())).toBeNull();
    });
    expect(await inFlight("limit-in-flight", alice)).toBe(1);
    await abortAllDurableObjects();
    models.play([{ text: "after the restart" }]);
    const result = await sessionOf("limit-in-flight", alice).callExpert(callOf("limit-in-flight", "answer", "again", {}, alice));
    expect(result).toMatchObject({ outcome: "ok", text: "after the restart" });
    expect(await inFlight("limit-in-flight", alice)).toBe(0);
  });

  it("a restart of the session frees the skill-wide in-flight slot of a run it cut off", async () => {
    // Staged as the run leaves it: the slot taken in the skill's limiter, the reservation noted in the session.
    const runId = crypto.randomUUID();
    const limits = usageLimitsSchema.parse({ runs_in_flight: 1 });
    expect(await skillLimiterStub(env, "limit-skill-in-flight").reserve(runId, "limit-skill-in-flight", limits, utcDay(Date.now()), Date.now())).toBeNull();
    await runInDurableObject(sessionOf("limit-skill-in-flight", alice), (_instance, state) =>
      state.storage.kv.put(`${RESERVATION_PREFIX}${runId}`, { skill: "limit-skill-in-flight" }),
    );
    models.play([{ text: "after the restart" }]);
    const refused = await sessionOf("limit-skill-in-flight", bob).callExpert(callOf("limit-skill-in-flight", "answer", "meanwhile", {}, bob));
    expect(refused.text).toContain(`this skill's (all users together) runs_in_flight in skill "limit-skill-in-flight" is 1 (used 1)`);
    await abortAllDurableObjects();
    const result = await sessionOf("limit-skill-in-flight", alice).callExpert(callOf("limit-skill-in-flight", "answer", "again", {}, alice));
    expect(result).toMatchObject({ outcome: "ok", text: "after the restart" });
    expect(await settledSkillRow("limit-skill-in-flight")).toMatchObject({ runs: 2, in_flight: 0 });
  });

  it("a skill without limits writes no counters", async () => {
    models.play([{ text: "free" }]);
    expect(await sessionOf("limit-none", alice).callExpert(callOf("limit-none", "answer", "one", {}, alice))).toMatchObject({ outcome: "ok" });
    await runDurableObjectAlarm(sessionOf("limit-none", alice));
    expect((await env.DB.prepare("SELECT count(*) AS n FROM usage_counters").first())?.n).toBe(0);
    expect(await userRow("limit-none", alice)).toEqual({ runs: 0, tokens: 0, cost_usd: 0, in_flight: 0 });
  });

  it("of concurrent calls of one user for the last units exactly as many run as the limit allows", async () => {
    const model = models.play(Array.from({ length: 8 }, () => ({ text: "raced", outputTokens: 4 })));
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, index) => sessionOf("race-user", alice).callExpert(callOf("race-user", "answer", `q${index}`, {}, alice))),
    );
    expect(results.filter((result) => result.outcome === "ok")).toHaveLength(3);
    for (const result of results.filter((result) => result.outcome !== "ok"))
      expect(result.text).toContain(`your runs_per_day in skill "race-user" is 3 (used 3)`);
    expect(model.doGenerateCalls).toHaveLength(3);
    // The refused ones undid nothing they did not take: the skill row counts only the 3.
    expect(await settledSkillRow("race-user")).toMatchObject({ runs: 3, tokens: 42, in_flight: 0 });
    expect(await userRow("race-user", alice)).toEqual({ runs: 3, tokens: 42, cost_usd: 0, in_flight: 0 });
    await runDurableObjectAlarm(sessionOf("race-user", alice));
    expect(await d1Row(userSubject("race-user", alice.userId))).toEqual({ runs: 3, tokens: 42, in_flight: 0 });
  });

  it("of concurrent calls of eight users for the skill's last units exactly as many run as the limit allows", async () => {
    const model = models.play(Array.from({ length: 8 }, () => ({ text: "raced" })));
    const users = Array.from({ length: 8 }, (_, index): UserProps => ({ userId: `u-race-${index}`, login: `racer${index}`, role: "member" }));
    const results = await Promise.all(users.map((user) => sessionOf("race-skill", user).callExpert(callOf("race-skill", "answer", "race", {}, user))));
    expect(results.filter((result) => result.outcome === "ok")).toHaveLength(3);
    expect(model.doGenerateCalls).toHaveLength(3);
    expect(await settledSkillRow("race-skill")).toMatchObject({ runs: 3, in_flight: 0 });
  });

  it("a limit of 0 refuses every run", async () => {
    const refused = await sessionOf("limit-zero", alice).callExpert(callOf("limit-zero", "answer", "one", {}, alice));
    expect(refused.text).toContain(`your runs_per_day in skill "limit-zero" is 0 (used 0)`);
  });
});
