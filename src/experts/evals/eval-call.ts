import type { UserProps } from "../../auth/user-props";
import type { ExpertConfig } from "../../catalog/catalog-schema";
import { type CompiledSkill, loadSkill } from "../../catalog/compiled-skill-cache";
import type { EvalRunOptions, ExpertCallRequest } from "../core/call-types";
import type { UserPrompter } from "../core/run-types";

/**
 * The user every eval run is made as. Eval runs go through the same ExpertSession path as a
 * member's call, in this user's own session (tenant:skill:<this id>), so they never appear in a
 * member's runs or threads; no identity provider mints an id with this prefix (`<idp>-<subject>`,
 * `local:dev`), so no member can be it.
 */
export const EVAL_USER: UserProps = { userId: "slipsnisse:eval", login: "eval", role: "member" };

/** The skill an eval runs against: the candidate it gates, else none (the live one is loaded). */
export function candidateSkill(skill: string, options: EvalRunOptions | undefined): CompiledSkill | null {
  return options?.candidate ? { name: skill, version: options.candidate.version, config: options.candidate.config } : null;
}

/**
 * The skill and expert a call runs, null when the skill has no such expert. An eval run is the
 * same path with the model swapped (evalExpert), on the candidate config it gates when it has one.
 */
export async function expertOfCall(
  env: Env,
  request: Pick<ExpertCallRequest, "skill" | "expert" | "evaluation">,
): Promise<{ skill: CompiledSkill; expert: ExpertConfig } | null> {
  const skill = candidateSkill(request.skill, request.evaluation) ?? (await loadSkill(env, request.skill));
  const found = skill?.config.experts.find((candidate) => candidate.name === request.expert);
  return skill && found ? { skill, expert: evalExpert(found, request.evaluation) } : null;
}

/** The expert as the eval runs it: the catalog's, with only the model (and the mode) swapped when asked. */
export function evalExpert(expert: ExpertConfig, options: EvalRunOptions | undefined): ExpertConfig {
  const moded = options?.mode === undefined ? expert : { ...expert, mode: options.mode };
  if (options?.provider === undefined) return moded;
  const { model: _model, ...rest } = moded;
  return { ...rest, provider: options.provider, ...(options.model === undefined ? {} : { model: options.model }) };
}

/**
 * An eval has no human to ask: approvals get the eval's fixed answer at once, and an `ask_user`
 * question is declined (the run goes on as it would for a user who declined).
 */
export function evalPrompter(options: EvalRunOptions): UserPrompter {
  return async (prompt) => (prompt.kind === "approval" ? { action: "accept", approve: options.approve } : { action: "decline" });
}
