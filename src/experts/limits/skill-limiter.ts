import { DurableObject } from "cloudflare:workers";
import type { UsageLimits } from "../../catalog/catalog-schema";
import { runIndexFlushDelay } from "../records/run-index-outbox";
import { objectEnv } from "./d1-call-path-seam";
import { LIMIT_COUNTER_TABLES, LimitCounters } from "./limit-counters";
import { SlotHolders } from "./slot-holders";
import { type CounterRow, skillSubject } from "./usage-counters";

/** A row of the limiter's counters as read at `asOf` (epoch ms): the live value, for the admin's view. */
export type LiveCounterRow = CounterRow & { asOf: number };

/**
 * The skill-wide usage counters of one skill (`limits.per_skill`), in one Durable Object per
 * tenant and skill, so every user's session reserves against the same counter exactly and
 * without a D1 round trip: the object runs one call at a time between awaits and its methods
 * do none (limit-counters.ts). It copies its counters to D1's `usage_counters` from its alarm,
 * about a second after a change, for history; the admin's view asks it (`liveRow`).
 *
 * A slot held by a run a restart cut off is freed as soon as the limiter needs it: a reservation
 * refused for `runs_in_flight`, and a fresh instance once, ask the slots' holder sessions whether
 * they still run them (slot-holders.ts), and free the ones they do not; then the reservation is
 * tried again.
 */
export class SkillLimiter extends DurableObject<Env> {
  private readonly counters: LimitCounters;
  private readonly holders: SlotHolders;
  /** Whether this instance has set an alarm not yet run: a change then needs no storage call to arm it. */
  private alarmArmed = false;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, objectEnv(env));
    for (const statement of LIMIT_COUNTER_TABLES) ctx.storage.sql.exec(statement);
    this.counters = new LimitCounters(ctx.storage.sql);
    this.holders = new SlotHolders(ctx.storage.sql, this.env.EXPERT_SESSION);
    // Every slot a fresh instance finds was taken before it started, maybe by a run a restart cut
    // off: checked now, not left to the next refusal. Not blocking: the holders' answers may need
    // this object (a waking session settles its cut-off runs here first).
    if (this.holders.any()) void this.reclaim();
  }

  /**
   * Counts run `runId` in the skill's row of `day`, or returns the row that refused it. `holder`
   * is the id of the session that runs it, asked later whether the run still exists.
   */
  async reserve(runId: string, skill: string, limits: UsageLimits, day: string, now: number, holder?: string): Promise<CounterRow | null> {
    const subject = { scope: "per_skill" as const, key: skillSubject(skill), limits };
    let refused = this.counters.reserve(runId, subject, day, now);
    if (refused !== null && limits.runs_in_flight !== undefined && refused.in_flight >= limits.runs_in_flight) {
      // Slots of runs that no longer exist are freed first; the retry is synchronous, so of the
      // calls waiting on the same check exactly as many get a slot as were freed or settled.
      await this.reclaim();
      refused = this.counters.reserve(runId, subject, day, now);
    }
    if (refused !== null) return refused;
    if (holder !== undefined) this.holders.record(runId, holder);
    this.changed(now);
    return null;
  }

  /** Adds the run's tokens and cost and frees its slot (idempotent by run id). */
  async settle(runId: string, tokens: number, costUsd: number, now: number): Promise<void> {
    this.counters.settle(runId, tokens, costUsd, now);
    this.holders.forget(runId);
    this.changed(now);
  }

  /** Undoes the reservation of a run that did not start. */
  async release(runId: string, now: number): Promise<void> {
    this.counters.release(runId, now);
    this.holders.forget(runId);
    this.changed(now);
  }

  /** Today's row of the skill, as this object holds it (D1 has it within about a second). */
  async row(skill: string, day: string): Promise<CounterRow> {
    return this.counters.row(skillSubject(skill), day);
  }

  /** Today's row for the admin: slots of runs that no longer exist freed first, then read. */
  async liveRow(skill: string, day: string): Promise<LiveCounterRow> {
    await this.reclaim();
    return { ...this.counters.row(skillSubject(skill), day), asOf: Date.now() };
  }

  /** Frees the slots whose holder no longer runs them (counted for the day, their tokens unknown). */
  private async reclaim(): Promise<number> {
    return this.holders.reclaim((runId) => {
      const now = Date.now();
      const freed = this.counters.settle(runId, 0, 0, now);
      if (freed) this.changed(now);
      return freed;
    });
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
