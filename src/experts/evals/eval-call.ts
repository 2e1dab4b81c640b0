import type { UserProps } from "../../auth/user-props";
import type { ExpertConfig, ProviderName, SkillConfig } from "../../catalog/catalog-schema";
import type { CompiledSkill } from "../../catalog/compiled-skill-cache";
import type { UserPrompter } from "../core/run-types";

/**
 * The user every eval run is made as. Eval runs go through the same ExpertSession path as a
 * member's call, in this user's own session (tenant:skill:<this id>), so they never appear in a
 * member's runs or threads; no identity provider mints an id with this prefix (`<idp>-<subject>`,
 * `local:dev`), so no member can be it.
 */
export const EVAL_USER: UserProps = { userId: "slipsnisse:eval", login: "eval", role: "member" };

/** What makes an ExpertCallRequest an eval run (structured-cloneable, it crosses Durable Object RPC). */
export interface EvalRunOptions {
  /** The eval's name in the catalog, recorded with the run. */
  name: string;
  /** A model to run the expert with instead of its own (`provider:model` on the command line). */
  provider?: ProviderName;
  model?: string;
  /** How a call needing approval is answered: declined unless the eval says `approve: true`. */
  approve: boolean;
  /**
   * A validated skill config not saved yet, and the version it would become: a write gated on
   * evals (`?require_evals=1`) runs them on what it is about to save, before anyone can use it.
   */
  candidate?: { version: number; config: SkillConfig };
}

/** The skill an eval runs against: the candidate it gates, else none (the live one is loaded). */
export function candidateSkill(skill: string, options: EvalRunOptions | undefined): CompiledSkill | null {
  return options?.candidate ? { name: skill, version: options.candidate.version, config: options.candidate.config } : null;
}

/** The expert as the eval runs it: the catalog's, with only the model swapped when asked. */
export function evalExpert(expert: ExpertConfig, options: EvalRunOptions | undefined): ExpertConfig {
  if (options?.provider === undefined) return expert;
  const { model: _model, ...rest } = expert;
  return { ...rest, provider: options.provider, ...(options.model === undefined ? {} : { model: options.model }) };
}

/**
 * An eval has no human to ask: approvals get the eval's fixed answer at once, and an `ask_user`
 * question is declined (the run goes on as it would for a user who declined).
 */
export function evalPrompter(options: EvalRunOptions): UserPrompter {
  return async (prompt) => (prompt.kind === "approval" ? { action: "accept", approve: options.approve } : { action: "decline" });
}
