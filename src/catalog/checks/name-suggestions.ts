import { SERVER_ID_PATTERN, SKILL_NAME_PATTERN, TOOL_NAME_PATTERN } from "../catalog-schema";

/** Fallback used when nothing usable is left after sanitizing. */
function orDefault(candidate: string, fallback: string, pattern: RegExp): string {
  return pattern.test(candidate) ? candidate : fallback;
}

/** A name MCP clients accept: 1-64 of [A-Za-z0-9_.-]. */
export function suggestToolName(name: string): string {
  const cleaned = name
    .trim()
    .replace(/[^A-Za-z0-9_.-]+/g, "_")
    .replace(/_{2,}/g, "_")
    .replace(/^_+|_+$/g, "")
    .slice(0, 64);
  return orDefault(cleaned, "expert", TOOL_NAME_PATTERN);
}

/** A server id that cannot collide with the `server__tool` separator. */
export function suggestServerId(id: string): string {
  const cleaned = id
    .toLowerCase()
    .replace(/__+/g, "-")
    .replace(/[^a-z0-9_-]+/g, "-")
    .replace(/^[-_]+|[-_]+$/g, "")
    .slice(0, 32)
    .replace(/[-_]+$/g, "");
  return orDefault(cleaned, "server", SERVER_ID_PATTERN);
}

export function suggestSkillName(name: string): string {
  const cleaned = name
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 63)
    .replace(/-+$/g, "");
  return orDefault(cleaned, "skill", SKILL_NAME_PATTERN);
}

/** UPPER_SNAKE_CASE, the shape `wrangler secret put` names are checked against here. */
export function toSecretName(...parts: string[]): string {
  const joined = parts
    .join("_")
    .replace(/([a-z0-9])([A-Z])/g, "$1_$2")
    .replace(/[^A-Za-z0-9]+/g, "_")
    .replace(/^[^A-Za-z]+|_+$/g, "")
    .toUpperCase();
  return joined.length > 0 ? joined : "API_TOKEN";
}
