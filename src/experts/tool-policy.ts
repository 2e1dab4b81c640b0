import type { ToolPolicy } from "../catalog/catalog-schema";

/** Glob over `server__tool` names: `*` any run of characters, `?` one character. */
export function globToRegExp(pattern: string): RegExp {
  const body = pattern
    .split("")
    .map((ch) => (ch === "*" ? ".*" : ch === "?" ? "." : ch.replace(/[.+^${}()|[\]\\]/g, "\\$&")))
    .join("");
  return new RegExp(`^${body}$`);
}

export function matchesAny(name: string, patterns: readonly string[]): boolean {
  return patterns.some((pattern) => globToRegExp(pattern).test(name));
}

/** The skill's policy over a namespaced tool name; a blocked pattern wins over any allow. */
export function isToolAllowed(namespacedName: string, policy: ToolPolicy): boolean {
  if (matchesAny(namespacedName, policy.blocked)) return false;
  return matchesAny(namespacedName, policy.allowed);
}
