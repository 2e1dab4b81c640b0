import type { ExpertConfig, SkillConfig } from "../../catalog/catalog-schema";
import type { CatalogProblem } from "../../catalog/catalog-problems";
import type { StoredSkill } from "../../catalog/catalog-store";
import { EvalGateFailedError } from "./eval-errors";
import { runExpertEvals } from "./eval-runner";

/** The experts of a candidate whose evals a write must pass, with the evals to run on each. */
export interface GatedExpert {
  /** The expert as the candidate has it (its name, model and prompt are what runs). */
  expert: ExpertConfig;
  /** Its index in the candidate, for the problem's JSON path. */
  index: number;
}

/**
 * Which experts of the candidate a write is gated on. An expert is gated when the request asks
 * (`?require_evals=1`), or when the candidate *or the stored* expert sets `eval_settings.gate`:
 * the stored gate decides on every change, including the one that turns it off, so one write
 * cannot switch the gate off and change the prompt unchecked. It counts only when it changed: its
 * entry did, or the skill's servers, tool policy or pricing did (each changes what its runs do or
 * cost). Under a stored gate the candidate's evals run, or the stored ones when the candidate
 * drops them all. `renamedFrom` maps a new expert name to the stored one it renames (the
 * per-expert PUT knows it; a whole document does not, so there a rename is a new expert).
 */
export function gatedExperts(
  candidate: SkillConfig,
  live: StoredSkill | null,
  requested: boolean,
  renamedFrom: ReadonlyMap<string, string> = new Map(),
): GatedExpert[] {
  const shared = (config: SkillConfig | undefined) => JSON.stringify([config?.servers, config?.tool_policy, config?.pricing]);
  const sharedChanged = shared(candidate) !== shared(live?.config);
  const gated: GatedExpert[] = [];
  for (const [index, expert] of candidate.experts.entries()) {
    const storedName = renamedFrom.get(expert.name) ?? expert.name;
    const before = live?.config.experts.find((other) => other.name === storedName);
    const storedGate = before?.eval_settings?.gate === true;
    if (!requested && !storedGate && expert.eval_settings?.gate !== true) continue;
    if (!sharedChanged && before !== undefined && storedName === expert.name && JSON.stringify(before) === JSON.stringify(expert)) continue;
    const evals = expert.evals?.length ? expert.evals : storedGate ? before?.evals : undefined;
    if (!evals || evals.length === 0) continue;
    gated.push({ expert: { ...expert, evals }, index });
  }
  return gated;
}

/**
 * Runs the evals of the gated experts (their own model) on the candidate itself, before it is
 * saved, and refuses the write naming each failing eval by its JSON path. Nothing is saved when
 * one fails.
 */
export async function runGate(env: Env, origin: string, skill: string, candidate: SkillConfig, live: StoredSkill | null, gated: readonly GatedExpert[]) {
  const problems: CatalogProblem[] = [];
  for (const { expert, index } of gated) {
    const evals = expert.evals ?? [];
    const report = await runExpertEvals(env, { skill, version: (live?.version ?? 0) + 1, config: candidate, expert, origin, candidate: true }, {});
    if (report.stopped) {
      problems.push({
        path: `$.skills.${skill}.experts[${index}].evals`,
        message: `not every eval of \`${expert.name}\` ran: ${report.stopped}`,
        fix: "raise the expert's eval_settings.max_cost",
      });
    }
    for (const result of report.models.flatMap((model) => model.results)) {
      if (result.passed) continue;
      const evalIndex = evals.findIndex((evalCase) => evalCase.name === result.eval);
      problems.push({
        path: `$.skills.${skill}.experts[${index}].evals[${evalIndex}]`,
        message: `eval \`${result.eval}\` of expert \`${expert.name}\` fails: ${result.failures.map((failure) => failure.reason).join("; ")}${result.trace ? ` (trace ${result.trace.page})` : ""}`,
        fix: "change the expert (prompt, model, tools) until the eval passes, or change the eval if it no longer describes a good answer",
      });
    }
  }
  if (problems.length > 0) throw new EvalGateFailedError(skill, problems);
}

/** gatedExperts then runGate: what the dashboard's restore uses (it has no request flag). */
export async function gateOnEvals(
  env: Env,
  origin: string,
  skill: string,
  candidate: SkillConfig,
  live: StoredSkill | null,
  requested: boolean,
): Promise<void> {
  await runGate(env, origin, skill, candidate, live, gatedExperts(candidate, live, requested));
}
