import { DurableObject } from "cloudflare:workers";
import type { UsageLimits } from "../../catalog/catalog-schema";
import { runIndexFlushDelay } from "../session/run-index-outbox";
import { objectEnv } from "./d1-call-path-seam";
import { LIMIT_COUNTER_TABLES, LimitCounters } from "./limit-counters";
import { type CounterRow, skillSubject } from "./usage-counters";

/**
 * The skill-wide usage counters of one skill (`limits.per_skill`), in one Durable Object per
 * tenant and skill, so every user's session reserves against the same counter exactly and
 * without a D1 round trip: the object runs one call at a time between awaits and its methods
 * do none (limit-counters.ts). It copies its counters to D1's `usage_counters` from its alarm,
 * about a second after a change, for the admin's usage pages.
 */
export class SkillLimiter extends DurableObject<Env> {
  private readonly counters: LimitCounters;
  /** Whether this instance has set an alarm not yet run: a change then needs no storage call to arm it. */
  private alarmArmed = false;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, objectEnv(env));
    for (const statement of LIMIT_COUNTER_TABLES) ctx.storage.sql.exec(statement);
    this.counters = new LimitCounters(ctx.storage.sql);
  }

  /** Counts run `runId` in the skill's row of `day`, or returns the row that refused it. */
  async reserve(runId: string, skill: string, limits: UsageLimits, day: string, now: number): Promise<CounterRow | null> {
    const refused = this.counters.reserve(runId, { scope: "per_skill", key: skillSubject(skill), limits }, day, now);
    if (refused === null) this.changed(now);
    return refused;
  }

  /** Adds the run's tokens and cost and frees its slot (idempotent by run id). */
  async settle(runId: string, tokens: number, costUsd: number, now: number): Promise<void> {
    this.counters.settle(runId, tokens, costUsd, now);
    this.changed(now);
  }

  /** Undoes the reservation of a run that did not start. */
  async release(runId: string, now: number): Promise<void> {
    this.counters.release(runId, now);
    this.changed(now);
  }

  /** Today's row of the skill, as this object holds it (D1 has it within about a second). */
  async row(skill: string, day: string): Promise<CounterRow> {
    return this.counters.row(skillSubject(skill), day);
  }

  override async alarm(): Promise<void> {
    this.alarmArmed = false;
    await this.counters.flush(this.env.DB);
    if (this.counters.dirty()) this.changed(Date.now());
  }

  private changed(now: number): void {
    if (this.alarmArmed) return;
    this.alarmArmed = true;
    // Not awaited: the alarm write is ordered with the counters' own writes by the output gate.
    void this.ctx.storage.setAlarm(now + runIndexFlushDelay(this.env));
  }
}

/** The SkillLimiter of a skill of this tenant. */
export function skillLimiterStub(env: Env, skill: string): DurableObjectStub<SkillLimiter> {
  return env.SKILL_LIMITER.get(env.SKILL_LIMITER.idFromName([env.TENANT, skill].map(encodeURIComponent).join(":")));
}
