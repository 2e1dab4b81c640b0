import { SKILL_NAME_PATTERN } from "../catalog/catalog-schema";

const DEEP_LINK = /^\/s\/([^/]+)\/admin(?:\/([a-z]+))?\/?$/;

/** The dashboard page each `/s/<skill>/admin/<page>` opens, filtered to the skill. */
const PAGES: Record<string, (skill: string, query: URLSearchParams) => string> = {
  "": (_skill, query) => `/admin?${query}`,
  runs: (_skill, query) => `/admin/runs?${query}`,
  live: (_skill, query) => `/admin/live?${query}`,
  skills: (_skill, query) => `/admin/skills?${query}`,
  servers: (skill, query) => `/admin/servers?${query}#servers-${skill}`,
  catalog: (skill) => `/admin/catalog/${skill}`,
};

/**
 * `/s/<skill>/admin` and `/s/<skill>/admin/<page>` (runs, live, skills, servers, catalog): a
 * skill's own place in the dashboard, beside its MCP endpoint `/s/<skill>/mcp`, so a link
 * shared with a skill's owner opens the views filtered to it. Only a redirect: the page it
 * names checks the admin session. Answered before the OAuth provider, which would otherwise ask
 * every `/s/` path for a bearer token. Null for any other path or a name that is not a skill name.
 */
export function dashboardDeepLink(url: URL): string | null {
  const match = DEEP_LINK.exec(url.pathname);
  const [, skill, page = ""] = match ?? [];
  if (skill === undefined || !SKILL_NAME_PATTERN.test(skill)) return null;
  const target = Object.hasOwn(PAGES, page) ? PAGES[page] : undefined;
  if (!target) return null;
  const query = new URLSearchParams(url.search);
  query.set("skill", skill);
  return target(skill, query);
}
