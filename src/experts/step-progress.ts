/** What the sub-agent is doing in a step, for the orchestrator's progress notifications. */
export function describeStep(toolNames: readonly string[]): string {
  if (toolNames.length === 0) return "writing the answer";
  const unique = [...new Set(toolNames)];
  const shown = unique.slice(0, 5).join(", ");
  return `calling ${shown}${unique.length > 5 ? ` and ${unique.length - 5} more` : ""}`;
}
