import type { ToolPolicy } from "../../catalog/catalog-schema";

/** Downstream tools reach the model as `server__tool` (server ids may not contain `__`). */
export const NAMESPACE_SEPARATOR = "__";

export function namespacedToolName(serverId: string, toolName: string): string {
  return `${serverId}${NAMESPACE_SEPARATOR}${toolName}`;
}

// OpenAI function names must match ^[a-zA-Z0-9_-]{1,64}$ and Gemini's are similar; MCP tool
// names may also contain "." (2025-11-25 naming guidance), so such names are rewritten.
const PROVIDER_UNSAFE = /[^A-Za-z0-9_-]/g;
const PROVIDER_MAX_LENGTH = 64;

/** A provider-safe name for `name`, unique among `taken` (which it joins). */
export function modelSafeToolName(name: string, taken: Set<string>): string {
  const base = name.replace(PROVIDER_UNSAFE, "_").slice(0, PROVIDER_MAX_LENGTH);
  let candidate = base;
  for (let n = 2; taken.has(candidate); n++) {
    const suffix = `_${n}`;
    candidate = base.slice(0, PROVIDER_MAX_LENGTH - suffix.length) + suffix;
  }
  taken.add(candidate);
  return candidate;
}

/**
 * Compiled globs, by pattern. Patterns come from the catalog (whitelists, policies, eval
 * assertions), so the set is small; every run matches its expert's whitelist and the skill's
 * policy again, and compiling each time cost more than the match. Bounded all the same: a
 * catalog with more patterns than this only compiles again.
 */
const compiledGlobs = new Map<string, RegExp>();
const MAX_COMPILED_GLOBS = 1_000;

/** Glob over `server__tool` names: `*` any run of characters, `?` one character. */
export function globToRegExp(pattern: string): RegExp {
  const cached = compiledGlobs.get(pattern);
  if (cached !== undefined) return cached;
  const body = pattern
    .split("")
    .map((ch) => (ch === "*" ? ".*" : ch === "?" ? "." : ch.replace(/[.+^${}()|[\]\\]/g, "\\$&")))
    .join("");
  // No `g` or `y` flag: the RegExp keeps no lastIndex between tests, so one instance is shared.
  const compiled = new RegExp(`^${body}$`);
  if (compiledGlobs.size >= MAX_COMPILED_GLOBS) compiledGlobs.clear();
  compiledGlobs.set(pattern, compiled);
  return compiled;
}

export function matchesAny(name: string, patterns: readonly string[]): boolean {
  return patterns.some((pattern) => globToRegExp(pattern).test(name));
}

/** The skill's policy over a namespaced tool name; a blocked pattern wins over any allow. */
export function isToolAllowed(namespacedName: string, policy: Pick<ToolPolicy, "allowed" | "blocked">): boolean {
  if (matchesAny(namespacedName, policy.blocked)) return false;
  return matchesAny(namespacedName, policy.allowed);
}
