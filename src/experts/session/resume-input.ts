import type { ExpertConfig } from "../../catalog/catalog-schema";
import { remainingBudget, resumedTurns } from "../run/ask-back";
import type { ApprovalResume } from "../core/run-types";
import type { PausedRun } from "../run/paused-run";
import type { ExpertCallRequest } from "../core/call-types";

/**
 * What a call continues from: a fresh run has the expert as configured; a reply to a paused run
 * has only the budget it had left and either the answer as its question's result (ask-back.ts)
 * or the approval decision, which runs or refuses the waiting calls (approval-resume.ts).
 */
export function resumeInput(
  expert: ExpertConfig,
  resumed: PausedRun | undefined,
  request: Pick<ExpertCallRequest, "answer" | "approve" | "decidedBy" | "refusal">,
): { expert: ExpertConfig; resume?: PausedRun["turns"]; approvalResume?: ApprovalResume } {
  if (!resumed) return { expert };
  const budgeted = { ...expert, budget: remainingBudget(expert.budget, resumed.used) };
  if (resumed.kind === "approval" && request.approve !== undefined) {
    return {
      expert: budgeted,
      approvalResume: {
        turns: resumed.turns,
        approvals: resumed.approvals ?? [],
        askCallIds: resumed.askCallIds,
        approve: request.approve,
        by: request.decidedBy ?? "orchestrator",
        ...(request.refusal && !request.approve ? { refusal: request.refusal } : {}),
      },
    };
  }
  if (request.answer !== undefined) return { expert: budgeted, resume: resumedTurns(resumed, request.answer) };
  return { expert: budgeted };
}
