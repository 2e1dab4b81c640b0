import type { ExpertConfig, SkillConfig } from "../../catalog/catalog-schema";
import { log } from "../../observability/logger";
import type { ExpertCallRequest } from "../core/call-types";
import type { RunUsage } from "../core/run-types";
import { LimitCounters } from "./limit-counters";
import {
  checkRunLimits,
  heldSlots,
  type LimitCheck,
  type LimiterOf,
  limiterCache,
  releaseAbandonedReservations,
  type RunReservation,
  settleRunLimits,
} from "./run-limits";
import type { CounterRow } from "./usage-counters";

/**
 * The limits of one ExpertSession: the user's usage counters of this skill (limits.per_user), in
 * the session's SQLite and copied to D1 by its alarm, and the skill's SkillLimiter
 * (limits.per_skill), through one stub so calls keep their order (run-limits.ts).
 */
export class SessionLimits {
  private readonly counters: LimitCounters;
  private readonly limiter: LimiterOf;

  constructor(
    private readonly env: Env,
    private readonly ctx: DurableObjectState,
  ) {
    this.counters = new LimitCounters(ctx.storage.sql);
    this.limiter = limiterCache(env, ctx.id.toString());
  }

  /** At the instance's start, before any call is let in, so a cut-off run's slot is free for the next one. */
  releaseAbandoned(): Promise<void> {
    return releaseAbandonedReservations(this.env, this.counters, this.ctx.storage).then(
      () => undefined,
      (error: unknown) => log("error", "abandoned run slots not freed", { error: String(error) }),
    );
  }

  /**
   * Reserves the run's slots, or refuses it. An eval run is bounded by the eval's own cost budget
   * instead of the skill's limits, which are the members' (src/admin/evals).
   */
  async check(request: ExpertCallRequest, config: SkillConfig, startedAt: number): Promise<LimitCheck> {
    if (request.evaluation) return { reservation: null };
    return checkRunLimits(this.limiter, this.counters, this.ctx.storage, request, config, startedAt);
  }

  /** Counts the run's usage and frees its slots; the skill-wide part goes on after the answer (waitUntil). */
  settle(request: ExpertCallRequest, reservation: RunReservation | null, config: SkillConfig, expert: ExpertConfig, usage: RunUsage): void {
    const settled = settleRunLimits(this.limiter, this.counters, this.ctx.storage, request, reservation, config, expert, usage);
    if (settled) this.ctx.waitUntil(settled);
  }

  heldSlots(runIds: string[]): string[] {
    return heldSlots(this.limiter, runIds);
  }

  row(subject: string, day: string): CounterRow {
    return this.counters.row(subject, day);
  }

  /** Whether counters wait for their copy to D1 (a failed copy is due again with the next flush). */
  dirty(): boolean {
    return this.counters.dirty();
  }

  flush(db: D1Database): Promise<number> {
    return this.counters.flush(db);
  }
}
