import { z } from "zod";
import type { ExpertConfig, SkillConfig } from "../../catalog/catalog-schema";
import { log } from "../../observability/logger";
import type { ExpertCallRequest, ExpertCallResult } from "../core/call-types";
import type { RunUsage } from "../core/run-types";
import { canUseSkill } from "../../catalog/skill-access";
import { SkillAccessRevokedError } from "./limit-errors";
import { failedRun } from "../run/run-end";
import type { LimitCounters } from "./limit-counters";
import { runCostUsd } from "./run-cost";
import { type SkillLimiter, skillLimiterStub } from "./skill-limiter";
import { refusalOf, subjectsOf, utcDay } from "./usage-counters";

/** Durable Object KV key prefix of a run's skill-wide reservation while it runs (src/storage-keys.ts). */
export const RESERVATION_PREFIX = "limit-reservation:";

const reservationSchema = z.object({ skill: z.string() });

/** A run's reserved slots: in the session's own counters, and in the skill's SkillLimiter when the skill has skill-wide limits. */
export interface RunReservation {
  skillWide: boolean;
  perUser: boolean;
}

export type LimitCheck = { reservation: RunReservation | null } | { refused: ExpertCallResult };

/**
 * The session's stub of its skill's SkillLimiter, one for the object's life: calls through one
 * stub arrive in order, so a settle sent without waiting reaches the limiter before the session's
 * next reservation does.
 */
export interface LimiterOf {
  (skill: string): DurableObjectStub<SkillLimiter>;
  /** After a failed call: a stub that threw may stay broken, so the next call gets a new one. */
  forget(): void;
  /** The session's id (hex), named as the holder of the slots it takes. */
  readonly holder: string;
  /**
   * The runs whose skill-wide slot this instance holds: from before the reservation is sent
   * until the limiter has the settle, so a limiter asking (slot-holders.ts) never hears "gone"
   * of a live run, nor of one whose tokens are still on their way. Memory only: a restarted
   * session holds none, which is how the limiter learns its runs are gone.
   */
  readonly held: Set<string>;
}

export function limiterCache(env: Env, holder: string): LimiterOf {
  let cached: { skill: string; stub: DurableObjectStub<SkillLimiter> } | undefined;
  const limiter = (skill: string) => {
    if (cached?.skill !== skill) cached = { skill, stub: skillLimiterStub(env, skill) };
    return cached.stub;
  };
  return Object.assign(limiter, {
    forget: () => {
      cached = undefined;
    },
    holder,
    held: new Set<string>(),
  });
}

/** Of `runIds`, the runs whose skill-wide slot this session instance still holds (the limiter's question). */
export function heldSlots(limiter: LimiterOf, runIds: readonly string[]): string[] {
  return runIds.filter((runId) => limiter.held.has(runId));
}

/**
 * The session's gate before a run: reserves the run's slot against the skill's limits, or
 * answers with the limit error (no run row, no model call, nothing counted). The user's
 * counters are the session's own (synchronous SQLite, no round trip); the skill's are one RPC
 * to its SkillLimiter. No D1 on this path: both copy their counters to D1 later. A limiter that
 * cannot be reached refuses too: limits that cannot be checked are not limits.
 */
export async function checkRunLimits(
  limiter: LimiterOf,
  counters: LimitCounters,
  storage: DurableObjectStorage,
  request: ExpertCallRequest,
  config: SkillConfig,
  startedAt: number,
): Promise<LimitCheck> {
  try {
    // Again here, not only at the endpoint: an open legacy SSE stream outlives an access change.
    if (!canUseSkill(request.skill, config, request.user)) throw new SkillAccessRevokedError(request.skill);
    const subjects = subjectsOf(request.skill, request.user.userId, config.limits);
    if (subjects.length === 0) return { reservation: null };
    const day = utcDay(startedAt);
    const reservation: RunReservation = { skillWide: false, perUser: false };
    for (const subject of subjects) {
      if (subject.scope === "per_user") {
        const refused = counters.reserve(request.runId, subject, day, startedAt);
        if (refused) throw refusalOf(request.skill, subject, refused, startedAt);
        reservation.perUser = true;
        continue;
      }
      // Recorded before the RPC, so a restart while it is out still frees what it may have taken.
      storage.kv.put(`${RESERVATION_PREFIX}${request.runId}`, { skill: request.skill });
      limiter.held.add(request.runId);
      let refused: Awaited<ReturnType<SkillLimiter["reserve"]>>;
      try {
        refused = await limiter(request.skill).reserve(request.runId, request.skill, subject.limits, day, startedAt, limiter.holder);
      } catch (error) {
        limiter.forget();
        // A slot the limiter took before the call failed is freed when it asks about it.
        limiter.held.delete(request.runId);
        storage.kv.delete(`${RESERVATION_PREFIX}${request.runId}`);
        throw error;
      }
      if (refused) {
        limiter.held.delete(request.runId);
        storage.kv.delete(`${RESERVATION_PREFIX}${request.runId}`);
        throw refusalOf(request.skill, subject, refused, startedAt);
      }
      reservation.skillWide = true;
    }
    return { reservation };
  } catch (error) {
    // The per-user slot is the first taken; a skill-wide refusal gives it back uncounted.
    counters.release(request.runId, startedAt);
    const result = failedRun(error, startedAt);
    return { refused: { runId: request.runId, outcome: result.outcome, text: result.text, usage: result.usage } };
  }
}

/**
 * Counts the run's tokens and cost and frees its in-flight slots; a failure is logged, never
 * thrown into the answer. The skill-wide settle is not waited for (one round trip off the
 * answer's path): the returned promise, for `waitUntil`, ends when it is done.
 */
export function settleRunLimits(
  limiter: LimiterOf,
  counters: LimitCounters,
  storage: DurableObjectStorage,
  request: ExpertCallRequest,
  reservation: RunReservation | null,
  config: SkillConfig,
  expert: ExpertConfig,
  usage: RunUsage,
): Promise<void> | undefined {
  if (reservation === null) return;
  const cost = runCostUsd(config, expert.provider, expert.model, usage.inputTokens, usage.outputTokens);
  const tokens = usage.inputTokens + usage.outputTokens;
  const now = Date.now();
  if (reservation.perUser) counters.settle(request.runId, tokens, cost, now);
  if (!reservation.skillWide) return;
  return limiter(request.skill)
    .settle(request.runId, tokens, cost, now)
    .then(
      () => {
        limiter.held.delete(request.runId);
        storage.kv.delete(`${RESERVATION_PREFIX}${request.runId}`);
      },
      (error: unknown) => {
        limiter.forget();
        // The run is over: the limiter frees its slot when it next asks (its tokens uncounted).
        limiter.held.delete(request.runId);
        log("error", "skill usage counters not settled", { error: error instanceof Error ? error.message : String(error) });
      },
    );
}

/**
 * At session start: the runs a restart cut off never settled, so their in-flight slots are
 * still taken. Frees them (their tokens are unknown and not counted); the run itself stays
 * counted for the day. The session's own slots are freed synchronously (nothing runs in a fresh
 * instance); skill-wide ones with one RPC each to the skill's limiter (idempotent by run id).
 */
export async function releaseAbandonedReservations(env: Env, counters: LimitCounters, storage: DurableObjectStorage): Promise<number> {
  const now = Date.now();
  let freed = counters.settleAll(now);
  for (const [key, value] of storage.kv.list<unknown>({ prefix: RESERVATION_PREFIX })) {
    const reservation = reservationSchema.safeParse(value);
    if (reservation.success) await skillLimiterStub(env, reservation.data.skill).settle(key.slice(RESERVATION_PREFIX.length), 0, 0, now);
    storage.kv.delete(key);
    freed += 1;
  }
  return freed;
}
