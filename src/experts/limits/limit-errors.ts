import { SlipsnisseError } from "../../errors";

export type LimitName = "runs_per_day" | "tokens_per_day" | "cost_per_day_usd" | "runs_in_flight";
export type LimitScope = "per_user" | "per_skill";

/**
 * A run refused before its model call because a catalog limit is used up. It names the limit,
 * its value and when it resets, so the orchestrator can tell its user when to try again.
 */
export class UsageLimitReachedError extends SlipsnisseError {
  readonly kind = "usage-limit-reached";
  readonly fix: string;
  constructor(
    readonly skill: string,
    readonly scope: LimitScope,
    readonly limit: LimitName,
    readonly value: number,
    readonly used: number,
    /** ISO time of the next UTC midnight for daily limits; null for runs_in_flight (frees as runs end). */
    readonly resetsAt: string | null,
  ) {
    const whose = scope === "per_user" ? "your" : "this skill's (all users together)";
    const reset = resetsAt === null ? "it frees up as soon as one of the runs in flight ends" : `it resets at ${resetsAt}`;
    super(`Usage limit reached: ${whose} ${limit} in skill "${skill}" is ${value} (used ${used}); ${reset}. Nothing was run and nothing was spent.`);
    this.fix = `Try again ${resetsAt === null ? "when a run in flight has finished" : `after ${resetsAt}`}, or ask an admin to raise limits.${scope}.${limit} of skill "${skill}".`;
  }
}

/** The caller's skill access was taken away while their MCP client stayed connected. */
export class SkillAccessRevokedError extends SlipsnisseError {
  readonly kind = "skill-access-revoked";
  readonly fix = "Ask an admin to add you (or one of your groups) to the skill's `access` in the catalog.";
  constructor(readonly skill: string) {
    super(`You no longer have access to skill "${skill}".`);
  }
}
