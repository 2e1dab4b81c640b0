import { abortAllDurableObjects, env } from "cloudflare:test";
import type { MockLanguageModelV4 } from "ai/test";
import { describe, expect, it } from "vitest";
import type { UserProps } from "../../../src/auth/user-props";
import type { ExpertCallResult } from "../../../src/experts/core/call-types";
import { usageLimitsSchema } from "../../../src/catalog/catalog-schema";
import { skillLimiterStub } from "../../../src/experts/limits/skill-limiter";
import { type CounterRow, utcDay } from "../../../src/experts/limits/usage-counters";
import { waitFor } from "../../support/wait-for";
import { gate, toResult, useCatalogWithScriptedModels } from "../../support/workers/scripted-model";
import { callOf, expertOf, sessionOf } from "../../support/workers/session-helpers";

// Far longer than the test: the cut-off runs' sessions' in-flight alarms (which used to free
// their slots, a timeout after the restart) cannot fire while it runs.
const TIMEOUT_MS = 600_000;
const SLOTS = 8;

const usersOf = (prefix: string, count: number): UserProps[] =>
  Array.from({ length: count }, (_, index): UserProps => ({ userId: `u-${prefix}-${index}`, login: `${prefix}${index}`, role: "member" }));

async function skillRow(skill: string): Promise<CounterRow> {
  return skillLimiterStub(env, skill).row(skill, utcDay(Date.now()));
}

/** Every call's model waits on the gate (or its run's abort), so its run holds its slot until the test opens it. */
function gatedModel(models: ReturnType<typeof useCatalogWithScriptedModels>): { model: MockLanguageModelV4; open: () => void } {
  const step = gate();
  const model = models.play([
    (options) =>
      new Promise((resolve, reject) => {
        options.abortSignal?.addEventListener("abort", () => reject(options.abortSignal?.reason));
        void step.opened.then(() => resolve(toResult({ text: "done" })));
      }),
  ]);
  return { model, open: step.open };
}

/** Starts `users`' calls at once; the refused ones answer at once, the admitted ones hold a slot each. */
function callAll(skill: string, users: UserProps[]): Array<Promise<ExpertCallResult | unknown>> {
  return users.map((user) =>
    sessionOf(skill, user)
      .callExpert(callOf(skill, "answer", "hold a slot", {}, user))
      .catch((error: unknown) => error),
  );
}

/**
 * Skill-wide `runs_in_flight` slots after a restart (issue 40): the runs it cut off never settle,
 * and their slots used to stay taken until each cut-off user's session woke again (their next
 * call, or the session's in-flight alarm a budget later), refusing everyone else meanwhile.
 */
describe("skill-wide in-flight slots across a restart", () => {
  const models = useCatalogWithScriptedModels({
    skills: {
      "slots-restart": { limits: { per_skill: { runs_in_flight: SLOTS } }, experts: [expertOf("answer", {}, { timeout_ms: TIMEOUT_MS })] },
      "slots-unasked": { limits: { per_skill: { runs_in_flight: 1 } }, experts: [expertOf("answer", {})] },
      "slots-burst": { limits: { per_skill: { runs_in_flight: SLOTS } }, experts: [expertOf("answer", {}, { timeout_ms: TIMEOUT_MS })] },
    },
  });

  it("live runs keep their slots; after a restart cut them off, another user's call is admitted at once", async () => {
    const skill = "slots-restart";
    const holders = usersOf("slot-holder", SLOTS);
    const first = gatedModel(models);
    const cut = callAll(skill, holders);
    await waitFor(`${SLOTS} runs holding the skill's slots`, async () => ((await skillRow(skill)).in_flight === SLOTS ? true : undefined));

    // The limiter asks the holders before it refuses: all are running, so nobody loses a slot. The
    // first to ask is a holder itself, asked about its own runs while it waits for the answer.
    const again = await sessionOf(skill, holders[0]).callExpert(callOf(skill, "answer", "and one more", {}, holders[0]));
    expect(again.text).toContain(`runs_in_flight in skill "${skill}" is ${SLOTS} (used ${SLOTS})`);
    const [late] = usersOf("slot-late", 1);
    if (!late) throw new Error("no user");
    const refused = await sessionOf(skill, late).callExpert(callOf(skill, "answer", "one more", {}, late));
    expect(refused.outcome).toBe("error");
    expect(refused.text).toContain(`this skill's (all users together) runs_in_flight in skill "${skill}" is ${SLOTS} (used ${SLOTS})`);
    await waitFor("the eight runs at their model call", () => (first.model.doGenerateCalls.length === SLOTS ? true : undefined));

    // A restart (deploy, crash) cuts all eight off mid-run; none of their users calls again.
    await abortAllDurableObjects();
    for (const result of await Promise.all(cut)) expect(String(result)).toContain("abortAllDurableObjects");

    const after = models.play([{ text: "admitted after the restart" }]);
    const admitted = await sessionOf(skill, late).callExpert(callOf(skill, "answer", "after the restart", {}, late));
    expect(admitted).toMatchObject({ outcome: "ok", text: "admitted after the restart" });
    expect(after.doGenerateCalls).toHaveLength(1);
    // The cut-off runs stay counted for the day; only their slots were freed.
    expect(await waitFor("the admitted run settled", async () => ((await skillRow(skill)).in_flight === 0 ? skillRow(skill) : undefined))).toMatchObject({
      runs: SLOTS + 1,
      in_flight: 0,
    });
    // Nine sessions start fresh, eight of them twice: 2-4 s on 2 loaded cores.
  }, 20_000);

  it("a slot whose holder cannot be asked is kept, never freed on a guess", async () => {
    const skill = "slots-unasked";
    const limiter = skillLimiterStub(env, skill);
    const limits = usageLimitsSchema.parse({ runs_in_flight: 1 });
    const day = utcDay(Date.now());
    expect(await limiter.reserve(crypto.randomUUID(), skill, limits, day, Date.now(), "not-a-session-id")).toBeNull();
    const holder = sessionOf(skill).id.toString();
    expect(await limiter.reserve(crypto.randomUUID(), skill, limits, day, Date.now(), holder)).toMatchObject({ in_flight: 1 });
    // A fresh limiter checks every slot once; this one stays taken too.
    await abortAllDurableObjects();
    expect(await skillLimiterStub(env, skill).reserve(crypto.randomUUID(), skill, limits, day, Date.now(), holder)).toMatchObject({ in_flight: 1 });
  });

  it("of a burst of calls after a restart, exactly as many run as the freed slots allow", async () => {
    const skill = "slots-burst";
    const first = gatedModel(models);
    const cut = callAll(skill, usersOf("burst-holder", SLOTS));
    await waitFor(`${SLOTS} runs at their model call`, () => (first.model.doGenerateCalls.length === SLOTS ? true : undefined));
    await abortAllDurableObjects();
    await Promise.all(cut);

    // 16 users at once against 8 slots a restart left taken: the freeing happens under the burst.
    const second = gatedModel(models);
    const burst = callAll(skill, usersOf("burst-caller", 2 * SLOTS));
    const answered: ExpertCallResult[] = [];
    for (const call of burst) void call.then((result) => answered.push(result as ExpertCallResult));
    await waitFor("every call over the limit refused", () => (answered.length === SLOTS ? true : undefined));
    expect(answered.every((result) => result.outcome === "error" && result.text.includes("runs_in_flight"))).toBe(true);
    await waitFor("the admitted runs at their model call", () => (second.model.doGenerateCalls.length === SLOTS ? true : undefined));
    expect((await skillRow(skill)).in_flight).toBe(SLOTS);

    second.open();
    const results = (await Promise.all(burst)) as ExpertCallResult[];
    expect(results.filter((result) => result.outcome === "ok")).toHaveLength(SLOTS);
    expect(await waitFor("the burst's runs settled", async () => ((await skillRow(skill)).in_flight === 0 ? skillRow(skill) : undefined))).toMatchObject({
      runs: 2 * SLOTS,
      in_flight: 0,
    });
    // 24 sessions start fresh in this test (each creates its SQLite schema): 3-5 s on 2 loaded cores.
  }, 20_000);
});
