import type { SkillConfig } from "../../catalog/catalog-schema";
import type { CatalogProblem } from "../../catalog/catalog-problems";
import type { StoredSkill } from "../../catalog/catalog-store";
import type { AdminContext } from "../admin-context";
import { EvalGateFailedError } from "./eval-errors";
import { runExpertEvals } from "./eval-runner";

/**
 * A write is gated on evals when the request asks (`?require_evals=1`, what `push
 * --require-evals` sends) or, per expert, when the catalog sets `eval_settings.gate`.
 */
export function evalsRequested(c: AdminContext): boolean {
  const value = c.req.query("require_evals");
  return value !== undefined && value !== "0" && value !== "false";
}

/**
 * Runs the evals of the candidate's changed experts (their own model) on the candidate itself,
 * before it is saved, and refuses the write naming each failing eval by its JSON path. An expert
 * counts as changed when its entry changed or the skill's servers, tool policy or pricing did
 * (each changes what its runs do or cost). Nothing is saved when one fails.
 */
export async function gateOnEvals(
  env: Env,
  origin: string,
  skill: string,
  candidate: SkillConfig,
  live: StoredSkill | null,
  requested: boolean,
): Promise<void> {
  const shared = (config: SkillConfig | undefined) => JSON.stringify([config?.servers, config?.tool_policy, config?.pricing]);
  const sharedChanged = shared(candidate) !== shared(live?.config);
  const problems: CatalogProblem[] = [];
  for (const [index, expert] of candidate.experts.entries()) {
    if (!expert.evals || expert.evals.length === 0) continue;
    if (!requested && expert.eval_settings?.gate !== true) continue;
    const before = live?.config.experts.find((other) => other.name === expert.name);
    if (!sharedChanged && before !== undefined && JSON.stringify(before) === JSON.stringify(expert)) continue;
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
      const evalIndex = expert.evals.findIndex((evalCase) => evalCase.name === result.eval);
      problems.push({
        path: `$.skills.${skill}.experts[${index}].evals[${evalIndex}]`,
        message: `eval \`${result.eval}\` of expert \`${expert.name}\` fails: ${result.failures.map((failure) => failure.reason).join("; ")}${result.trace ? ` (trace ${result.trace.page})` : ""}`,
        fix: "change the expert (prompt, model, tools) until the eval passes, or change the eval if it no longer describes a good answer",
      });
    }
  }
  if (problems.length > 0) throw new EvalGateFailedError(skill, problems);
}

/** gateOnEvals for an admin API write: the request's origin for trace links, its `?require_evals`. */
export function gateWrite(c: AdminContext, skill: string, candidate: SkillConfig, live: StoredSkill | null): Promise<void> {
  return gateOnEvals(c.env, new URL(c.req.url).origin, skill, candidate, live, evalsRequested(c));
}
