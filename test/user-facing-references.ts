/**
 * Admin routes, CLI commands and npm scripts that user-facing text (error fixes, messages, the
 * start banner, help) tells people to use, found in source files so a test can check each one
 * exists. Placeholders (`${skill}`, `<skill>`) become `<p>`, which matches any path segment.
 */
export interface Mentions {
  adminRoutes: Array<{ method: string; path: string; file: string }>;
  cliCommands: Array<{ command: string; file: string }>;
  npmScripts: Array<{ script: string; file: string }>;
}

export function findMentions(files: Record<string, string>): Mentions {
  const mentions: Mentions = { adminRoutes: [], cliCommands: [], npmScripts: [] };
  for (const [file, raw] of Object.entries(files)) {
    const text = raw.replace(/\$\{[^}\n]*\}/g, "<p>").replace(/<[^<>\n]{1,40}>/g, "<p>");
    for (const match of text.matchAll(/\b(GET|POST|PUT|DELETE|PATCH) (\/admin\/api[\w/<>.:-]*)/g)) {
      const [, method = "", path = ""] = match;
      mentions.adminRoutes.push({ method, path: path.replace(/\.+$/, ""), file });
    }
    for (const match of text.matchAll(/(?:npx |`)slipsnisse ([a-z][a-z-]*)/g)) mentions.cliCommands.push({ command: match[1] ?? "", file });
    for (const match of text.matchAll(/\bnpm (?:run ([a-z][\w:-]*)|(start|test)\b)/g)) mentions.npmScripts.push({ script: match[1] ?? match[2] ?? "", file });
  }
  return mentions;
}

/** Whether a registered route pattern (`/admin/api/skills/:skill`) serves a mentioned path. */
export function routeServes(pattern: string, mentioned: string): boolean {
  const want = mentioned.split("/");
  const have = pattern.split("/");
  return want.length === have.length && have.every((segment, i) => segment.startsWith(":") || want[i]?.includes("<p>") || segment === want[i]);
}
