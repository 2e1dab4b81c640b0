import type { ExpertConfig, SkillConfig } from "../../catalog/catalog-schema";
import { log } from "../../observability/logger";
import type { ExpertCallRequest, ExpertCallResult } from "../expert-call";
import type { RunUsage } from "../expert-types";
import { canUseSkill } from "../../catalog/skill-access";
import { SkillAccessRevokedError } from "./limit-errors";
import { failedRun } from "../session/failed-run";
import { runCostUsd } from "./run-cost";
import { type RunReservation, reserveRun, settleRun } from "./usage-counters";

export type LimitCheck = { reservation: RunReservation | null } | { refused: ExpertCallResult };

/**
 * The session's gate before a run: reserves the run's slot against the skill's limits, or
 * answers with the limit error (no run row, no model call, nothing counted). A counter store
 * that cannot be reached refuses too: limits that cannot be checked are not limits.
 */
export async function checkRunLimits(db: D1Database, request: ExpertCallRequest, config: SkillConfig, startedAt: number): Promise<LimitCheck> {
  try {
    // Again here, not only at the endpoint: an open legacy SSE stream outlives an access change.
    if (!canUseSkill(config, request.user)) throw new SkillAccessRevokedError(request.skill);
    return { reservation: await reserveRun(db, request.skill, request.user.userId, config.limits, startedAt) };
  } catch (error) {
    const result = failedRun(error, startedAt);
    return { refused: { runId: request.runId, outcome: result.outcome, text: result.text, usage: result.usage } };
  }
}

/** Counts the run's tokens and cost and frees its in-flight slot; a failure is logged, never thrown into the answer. */
export async function settleRunLimits(db: D1Database, reservation: RunReservation | null, config: SkillConfig, expert: ExpertConfig, usage: RunUsage): Promise<void> {
  if (reservation === null) return;
  const cost = runCostUsd(config, expert.provider, expert.model, usage.inputTokens, usage.outputTokens);
  try {
    await settleRun(db, reservation, usage.inputTokens + usage.outputTokens, cost, Date.now());
  } catch (error) {
    log("error", "usage counters not settled", { subjects: reservation.subjects.length, error: error instanceof Error ? error.message : String(error) });
  }
}
