import type { ExpertRunInput, ExpertRunResult } from "../core/run-types";
import { codeModeExpert } from "./code-mode";
import { routeExpert } from "./route";
import { synthesizeExpert } from "./synthesize";

/**
 * Runs one expert call in the expert's mode: `synthesize` (synthesize.ts) runs a bounded
 * generateText tool loop over the expert's whitelisted downstream tools and writes an answer;
 * `route` (route.ts) makes one model call that picks one tool call; `code` (code-mode.ts) has the
 * model write scripts over the tools, run in a sandbox. Every budget in
 * `expert.budget` is enforced; running out returns what was gathered. Cancellation, model
 * failures and unavailable tools come back as outcomes, not throws.
 */
export function runExpert(input: ExpertRunInput): Promise<ExpertRunResult> {
  if (input.expert.mode === "code") return codeModeExpert(input);
  return input.expert.mode === "route" ? routeExpert(input) : synthesizeExpert(input);
}
