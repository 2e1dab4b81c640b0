import type { SkillConfig } from "../catalog/catalog-schema";
import { jsonPath, type CatalogProblem } from "../catalog/catalog-problems";
import { workerLoader } from "../env";
import { InvalidBodyError } from "./admin-errors";

/**
 * What a catalog asks of the deployment it is written to, beyond the document itself: a
 * code-mode expert runs its scripts in Dynamic Workers, which need the Worker's `worker_loaders`
 * binding. Refused at write time so no call fails later for a missing binding.
 */
export function deploymentProblems(env: Env, skills: Readonly<Record<string, SkillConfig>>): CatalogProblem[] {
  if (workerLoader(env) !== undefined) return [];
  return Object.entries(skills).flatMap(([skill, config]) =>
    config.experts.flatMap((expert, index) =>
      expert.mode === "code"
        ? [
            {
              path: jsonPath(["skills", skill, "experts", index, "mode"]),
              message: `expert \`${expert.name}\` asks for \`mode: "code"\`, but this Worker has no \`worker_loaders\` binding to run its scripts in`,
              fix: 'add `[[worker_loaders]]` with `binding = "LOADER"` to the Worker\'s wrangler.toml (each `[env.<tenant>]` block too), run `npm run types` and deploy; or set `mode` to `"synthesize"`',
            },
          ]
        : [],
    ),
  );
}

/** Throws the problems of `deploymentProblems` as the admin API's 400. */
export function assertDeploymentRuns(env: Env, skills: Readonly<Record<string, SkillConfig>>): void {
  const problems = deploymentProblems(env, skills);
  if (problems.length > 0) throw new InvalidBodyError(problems);
}
