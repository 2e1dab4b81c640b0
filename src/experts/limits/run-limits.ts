import { z } from "zod";
import type { ExpertConfig, SkillConfig } from "../../catalog/catalog-schema";
import { log } from "../../observability/logger";
import type { ExpertCallRequest, ExpertCallResult } from "../session/expert-call";
import type { RunUsage } from "../run/expert-types";
import { canUseSkill } from "../../catalog/skill-access";
import { SkillAccessRevokedError } from "./limit-errors";
import { failedRun } from "../run/run-end";
import { runCostUsd } from "./run-cost";
import { type RunReservation, reserveRun, settleRun } from "./usage-counters";

/** Durable Object KV key prefix of a run's reservation while it runs (src/storage-keys.ts). */
export const RESERVATION_PREFIX = "limit-reservation:";

const reservationSchema = z.object({ day: z.string(), subjects: z.array(z.string()) });

export type LimitCheck = { reservation: RunReservation | null } | { refused: ExpertCallResult };

/**
 * The session's gate before a run: reserves the run's slot against the skill's limits, or
 * answers with the limit error (no run row, no model call, nothing counted). A counter store
 * that cannot be reached refuses too: limits that cannot be checked are not limits.
 */
export async function checkRunLimits(
  db: D1Database,
  storage: DurableObjectStorage,
  request: ExpertCallRequest,
  config: SkillConfig,
  startedAt: number,
): Promise<LimitCheck> {
  try {
    // Again here, not only at the endpoint: an open legacy SSE stream outlives an access change.
    if (!canUseSkill(config, request.user)) throw new SkillAccessRevokedError(request.skill);
    const reservation = await reserveRun(db, request.skill, request.user.userId, config.limits, startedAt);
    // Kept in the session's storage until settled, so a restart mid-run can free the slot.
    if (reservation) storage.kv.put(`${RESERVATION_PREFIX}${request.runId}`, reservation);
    return { reservation };
  } catch (error) {
    const result = failedRun(error, startedAt);
    return { refused: { runId: request.runId, outcome: result.outcome, text: result.text, usage: result.usage } };
  }
}

/** Counts the run's tokens and cost and frees its in-flight slot; a failure is logged, never thrown into the answer. */
export async function settleRunLimits(
  db: D1Database,
  storage: DurableObjectStorage,
  runId: string,
  reservation: RunReservation | null,
  config: SkillConfig,
  expert: ExpertConfig,
  usage: RunUsage,
): Promise<void> {
  if (reservation === null) return;
  const cost = runCostUsd(config, expert.provider, expert.model, usage.inputTokens, usage.outputTokens);
  try {
    await settleRun(db, reservation, usage.inputTokens + usage.outputTokens, cost, Date.now());
    storage.kv.delete(`${RESERVATION_PREFIX}${runId}`);
  } catch (error) {
    log("error", "usage counters not settled", { subjects: reservation.subjects.length, error: error instanceof Error ? error.message : String(error) });
  }
}

/**
 * At session start: the runs a restart cut off never settled, so their in-flight slots are
 * still taken. Frees them (their tokens are unknown and not counted); the run itself stays
 * counted for the day.
 */
export async function releaseAbandonedReservations(db: D1Database, storage: DurableObjectStorage): Promise<number> {
  const pending = [...storage.kv.list<unknown>({ prefix: RESERVATION_PREFIX })];
  for (const [key, value] of pending) {
    const reservation = reservationSchema.safeParse(value);
    if (reservation.success) await settleRun(db, reservation.data, 0, 0, Date.now());
    storage.kv.delete(key);
  }
  return pending.length;
}
