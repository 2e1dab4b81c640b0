import type { ExpertRunInput } from "./expert-types";

/** What the sub-agent is doing in a step, for the orchestrator's progress notifications. */
export function describeStep(toolNames: readonly string[]): string {
  if (toolNames.length === 0) return "writing the answer";
  const unique = [...new Set(toolNames)];
  const shown = unique.slice(0, 5).join(", ");
  return `calling ${shown}${unique.length > 5 ? ` and ${unique.length - 5} more` : ""}`;
}

/** Progress is best effort: a caller that went away must not end the run. */
export function reportStep(input: ExpertRunInput, step: number, message: string, maxSteps = input.expert.budget.max_steps): void {
  try {
    input.onStep?.({ step, maxSteps, message });
  } catch {
    // The run goes on and is still recorded.
  }
}
