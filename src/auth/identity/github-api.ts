import { OAuthError } from "@cloudflare/workers-oauth-provider";
import { z } from "zod";
import { UpstreamSignInError } from "../auth-errors";
import type { UpstreamFetch } from "./identity-provider";

const provider = "GitHub";
const userSchema = z.object({ id: z.number(), login: z.string() });
const emailsSchema = z.array(z.object({ email: z.string(), primary: z.boolean(), verified: z.boolean() }));
const membershipSchema = z.object({ state: z.string() });
const teamsSchema = z.array(z.object({ slug: z.string(), organization: z.object({ login: z.string() }) }));

/** GitHub pages /user/teams at most 100 a page; five pages bound a sign-in's calls. */
const TEAMS_PER_PAGE = 100;
const TEAM_PAGES = 5;

export interface GithubApi {
  user(token: string): Promise<{ id: number; login: string; email?: string }>;
  /** Org (or team, when `team` is set) membership, asked with the given token. */
  isMember(token: string, org: string, team: string | undefined, login: string, asUser: boolean): Promise<boolean>;
  /** The user's teams in `org` as `org/team-slug`, asked with the user's token (scope read:org). */
  teams(token: string, org: string): Promise<string[]>;
}

export function githubApi(apiUrl: string, upstreamFetch: UpstreamFetch): GithubApi {
  const get = (path: string, token: string) =>
    upstreamFetch(`${apiUrl}${path}`, {
      headers: { Authorization: `Bearer ${token}`, Accept: "application/vnd.github+json", "User-Agent": "slipsnisse", "X-GitHub-Api-Version": "2022-11-28" },
      redirect: "manual",
      signal: AbortSignal.timeout(10_000),
    });
  return {
    async user(token) {
      const response = await get("/user", token);
      if (!response.ok) throw new UpstreamSignInError(provider, "reading your profile", `HTTP ${response.status}`);
      const user = userSchema.safeParse(await response.json().catch(() => undefined)).data;
      if (user === undefined) throw new UpstreamSignInError(provider, "reading your profile", "the answer has no numeric id and login");
      const emails = await get("/user/emails", token);
      const list = emails.ok ? emailsSchema.safeParse(await emails.json().catch(() => undefined)) : undefined;
      const primary = list?.success ? list.data.find((entry) => entry.primary && entry.verified) : undefined;
      return { ...user, email: primary?.email };
    },
    async teams(token, org) {
      const found: string[] = [];
      for (let page = 1; page <= TEAM_PAGES; page++) {
        const response = await get(`/user/teams?per_page=${TEAMS_PER_PAGE}&page=${page}`, token);
        if (!response.ok) throw new UpstreamSignInError(provider, "reading your teams", `HTTP ${response.status}`);
        const teams = teamsSchema.safeParse(await response.json());
        if (!teams.success) throw new UpstreamSignInError(provider, "reading your teams", "an unexpected answer");
        for (const team of teams.data) {
          // Logins are case-insensitive on GitHub; other orgs' teams say nothing about this team.
          if (team.organization.login.toLowerCase() === org.toLowerCase()) found.push(`${org}/${team.slug}`);
        }
        if (teams.data.length < TEAMS_PER_PAGE) break;
      }
      return found;
    },
    async isMember(token, org, team, login, asUser) {
      const path = team
        ? `/orgs/${encodeURIComponent(org)}/teams/${encodeURIComponent(team)}/memberships/${encodeURIComponent(login)}`
        : asUser
          ? `/user/memberships/orgs/${encodeURIComponent(org)}`
          : `/orgs/${encodeURIComponent(org)}/members/${encodeURIComponent(login)}`;
      const response = await get(path, token);
      // 204 from /members means "is a member"; the membership endpoints answer 200 with a state.
      if (response.status === 204) return true;
      if (response.status === 200) {
        const membership = membershipSchema.safeParse(await response.json());
        return membership.success && membership.data.state === "active";
      }
      if (response.status === 404 || response.status === 302 || response.status === 403) return false;
      if (asUser) throw new UpstreamSignInError(provider, "checking team membership", `HTTP ${response.status}`);
      // At refresh: an outage must not revoke anyone; the client retries later.
      throw new OAuthError("temporarily_unavailable", {
        description: "GitHub membership could not be checked; retry shortly.",
        statusCode: 503,
        headers: { "Retry-After": "30" },
      });
    },
  };
}
