import { env, runDurableObjectAlarm } from "cloudflare:test";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { UserProps } from "../../../src/auth/user-props";
import { watchD1ForTests } from "../../../src/experts/limits/d1-call-path-seam";
import { skillLimiterStub } from "../../../src/experts/limits/skill-limiter";
import { countersOfDay, utcDay } from "../../../src/experts/limits/usage-counters";
import { waitFor } from "../../support/wait-for";
import type { ExpertCallRequest } from "../../../src/experts/core/call-types";
import { useCatalogWithScriptedModels } from "../../support/workers/scripted-model";
import { callOf, expertOf, sessionOf } from "../../support/workers/session-helpers";

const SKILL = "no-d1-limits";
const dana: UserProps = { userId: "u-no-d1-dana", login: "dana", role: "member" };
const eve: UserProps = { userId: "u-no-d1-eve", login: "eve", role: "member" };

/**
 * D1 lives in one region: a statement on the call's path is a cross-region round trip for a
 * call served elsewhere. The objects on the path (the user's ExpertSession, the skill's
 * SkillLimiter) get their D1 binding through a seam that reports every statement; none may run
 * between a call's start and its answer, for a skill with per-user and skill-wide limits, in
 * the call that runs, the one the limit refuses and calls running side by side. The counters
 * reach D1 afterwards, from the objects' alarms.
 */
describe("no D1 statement inside an expert call", () => {
  const models = useCatalogWithScriptedModels({
    skills: {
      [SKILL]: {
        limits: { per_user: { runs_per_day: 2, tokens_per_day: 1000 }, per_skill: { runs_per_day: 10, runs_in_flight: 5 } },
        experts: [expertOf("answer", {})],
      },
    },
  });
  const statements: Array<{ during: boolean; sql: string }> = [];
  let calling = 0;
  beforeAll(() => watchD1ForTests((_what, sql) => statements.push({ during: calling > 0, sql })));
  afterAll(() => watchD1ForTests(undefined));

  async function call(user: UserProps, query: string, extra: Partial<ExpertCallRequest> = {}) {
    calling += 1;
    try {
      return await sessionOf(SKILL, user).callExpert(callOf(SKILL, "answer", query, extra, user));
    } finally {
      calling -= 1;
    }
  }

  it("runs, refuses and runs concurrently with no D1 statement; the alarms copy the counters to D1", async () => {
    const model = models.play(Array.from({ length: 4 }, () => ({ text: "answered" })));
    expect(await call(dana, "first")).toMatchObject({ outcome: "ok" });
    expect(await call(dana, "second")).toMatchObject({ outcome: "ok" });
    expect((await call(dana, "third")).text).toContain(`your runs_per_day in skill "${SKILL}" is 2 (used 2)`);
    const together = await Promise.all([call(eve, "one"), call(eve, "two")]);
    expect(together.map((result) => result.outcome)).toEqual(["ok", "ok"]);
    expect(model.doGenerateCalls).toHaveLength(4);
    expect(statements.filter((statement) => statement.during)).toEqual([]);

    // Later, off the path: each object's alarm writes its counters (the seam sees these).
    for (const user of [dana, eve]) expect(await runDurableObjectAlarm(sessionOf(SKILL, user))).toBe(true);
    // The session sends the skill-wide settle without waiting for it: the limiter has it once its slots are free.
    await waitFor("the runs settled in the skill's limiter", async () =>
      (await skillLimiterStub(env, SKILL).row(SKILL, utcDay(Date.now()))).in_flight === 0 ? true : undefined,
    );
    expect(await runDurableObjectAlarm(skillLimiterStub(env, SKILL))).toBe(true);
    expect(statements.some((statement) => !statement.during && /usage_counters/.test(statement.sql))).toBe(true);
    const counters = await countersOfDay(env.DB, SKILL, Date.now());
    expect(counters.skill).toMatchObject({ runs: 4, in_flight: 0 });
    expect(counters.users).toEqual([
      expect.objectContaining({ user_id: dana.userId, runs: 2, in_flight: 0, tokens: 30 }),
      expect.objectContaining({ user_id: eve.userId, runs: 2, in_flight: 0, tokens: 30 }),
    ]);
  });
});
