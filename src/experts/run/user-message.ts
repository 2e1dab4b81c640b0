/**
 * The sub-agent's user turn from the orchestrator's validated arguments: a `query` string as is,
 * every other argument as a readable "name: value" line below it.
 */
export function buildUserMessage(args: Record<string, unknown>): string {
  const query = typeof args.query === "string" ? args.query : undefined;
  const rest = Object.entries(args).filter(([key, value]) => !(key === "query" && query !== undefined) && value !== undefined);
  const lines = rest.map(([key, value]) => `${key}: ${renderValue(value)}`);
  if (query === undefined) return lines.join("\n") || "(no arguments)";
  return lines.length === 0 ? query : `${query}\n\n${lines.join("\n")}`;
}

function renderValue(value: unknown): string {
  if (typeof value === "string") return value.includes("\n") ? `\n${value}` : value;
  if (typeof value === "number" || typeof value === "boolean" || value === null) return String(value);
  return JSON.stringify(value, null, 2);
}
