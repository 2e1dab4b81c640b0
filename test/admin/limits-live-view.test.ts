import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it } from "vitest";
import type { UserProps } from "../../src/auth/user-props";
import type { ExpertCallResult } from "../../src/experts/core/call-types";
import { setRunIndexFlushDelayForTests } from "../../src/experts/records/run-index-outbox";
import { skillLimiterStub } from "../../src/experts/limits/skill-limiter";
import { utcDay } from "../../src/experts/limits/usage-counters";
import { waitFor } from "../support/wait-for";
import { TEST_FLUSH_DELAY_MS } from "../support/workers/run-index-flush";
import { gate, toResult, useCatalogWithScriptedModels } from "../support/workers/scripted-model";
import { callOf, expertOf, sessionOf } from "../support/workers/session-helpers";
import { admin } from "./admin-test-client";

const skill = "limits-live-view";
const rhea: UserProps = { userId: "u-live-rhea", login: "rhea", role: "member" };
const sami: UserProps = { userId: "u-live-sami", login: "sami", role: "member" };
const TIMEOUT_MS = 600_000;

interface UsageRow {
  runs_per_day: number;
  tokens_per_day: number;
  runs_in_flight: number;
  asOf: string | null;
}
interface LimitsView {
  perSkill: UsageRow;
  perUser: Array<UsageRow & { userId: string }>;
}

async function view(): Promise<LimitsView> {
  const { status, body } = await admin("GET", `/skills/${skill}/limits`);
  expect(status).toBe(200);
  return body as unknown as LimitsView;
}

function userIn(limits: LimitsView, user: UserProps): UsageRow | undefined {
  return limits.perUser.find((row) => row.userId === user.userId);
}

/**
 * The admin's limits view while runs are in flight (issue 40): it read D1's copy, which a session
 * writes only after its runs end, and showed a member with 0 in flight while they had 3 going.
 * It now asks the counters' owners (the user's session, the skill's limiter) and says per row
 * when its numbers were true.
 */
describe("the admin limits view reads the live counters", () => {
  const models = useCatalogWithScriptedModels({
    skills: {
      [skill]: {
        limits: { per_user: { runs_in_flight: 5, runs_per_day: 50 }, per_skill: { runs_in_flight: 10 } },
        experts: [expertOf("answer", {}, { timeout_ms: TIMEOUT_MS })],
      },
    },
  });
  afterEach(() => setRunIndexFlushDelayForTests(TEST_FLUSH_DELAY_MS));

  it("shows a member's runs in flight exactly while they run, and 0 after", async () => {
    await env.DB.exec("DELETE FROM usage_counters");
    // An earlier run of the day: D1's copy has the member, with nothing in flight.
    models.play([{ text: "earlier", outputTokens: 5 }]);
    expect(await sessionOf(skill, rhea).callExpert(callOf(skill, "answer", "earlier", {}, rhea))).toMatchObject({ outcome: "ok" });
    expect(await runDurableObjectAlarm(sessionOf(skill, rhea))).toBe(true);
    expect(userIn(await view(), rhea)).toMatchObject({ runs_per_day: 1, runs_in_flight: 0 });

    const step = gate();
    const model = models.play([
      async () => {
        await step.opened;
        return toResult({ text: "done" });
      },
    ]);
    const runs = [1, 2, 3].map((index) => sessionOf(skill, rhea).callExpert(callOf(skill, "answer", `run ${index}`, {}, rhea)));
    // Each run asks the model only once it holds its slots; then it waits at the gate.
    await waitFor("three runs at their model call", () => (model.doGenerateCalls.length === 3 ? true : undefined));

    const before = Date.now();
    const during = await view();
    expect(userIn(during, rhea)).toMatchObject({ runs_per_day: 4, tokens_per_day: 15, runs_in_flight: 3 });
    expect(during.perSkill).toMatchObject({ runs_per_day: 4, runs_in_flight: 3 });
    for (const row of [userIn(during, rhea), during.perSkill]) expect(Date.parse(row?.asOf ?? "")).toBeGreaterThanOrEqual(before);

    step.open();
    expect(((await Promise.all(runs)) as ExpertCallResult[]).map((result) => result.outcome)).toEqual(["ok", "ok", "ok"]);
    await waitFor("the runs settled in the skill's limiter", async () =>
      (await skillLimiterStub(env, skill).row(skill, utcDay(Date.now()))).in_flight === 0 ? true : undefined,
    );
    const after = await view();
    expect(userIn(after, rhea)).toMatchObject({ runs_per_day: 4, tokens_per_day: 60, runs_in_flight: 0 });
    expect(after.perSkill).toMatchObject({ runs_per_day: 4, runs_in_flight: 0 });
  });

  it("lists a member whose first run of the day is still going, from a second after it started", async () => {
    // A flush delay short against the run's timeout, so which alarm the run's start set tells them apart.
    setRunIndexFlushDelayForTests(60_000);
    const step = gate();
    const model = models.play([
      async () => {
        await step.opened;
        return toResult({ text: "done" });
      },
    ]);
    const startedAt = Date.now();
    const run = sessionOf(skill, sami).callExpert(callOf(skill, "answer", "first of the day", {}, sami));
    // The run sets the alarm before it asks the model.
    await waitFor("the run at its model call", () => (model.doGenerateCalls.length === 1 ? true : undefined));
    const alarm = await runInDurableObject(sessionOf(skill, sami), (_instance, state) => state.storage.getAlarm());
    // The counters' copy to D1 is due a flush delay after the start, not at the run's timeout.
    expect(alarm).not.toBeNull();
    expect(alarm).toBeLessThan(startedAt + TIMEOUT_MS);
    expect(await runDurableObjectAlarm(sessionOf(skill, sami))).toBe(true);
    expect(userIn(await view(), sami)).toMatchObject({ runs_per_day: 1, runs_in_flight: 1 });
    step.open();
    expect((await run).outcome).toBe("ok");
    expect(userIn(await view(), sami)).toMatchObject({ runs_per_day: 1, runs_in_flight: 0 });
  });
});
