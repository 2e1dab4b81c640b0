import { OAuthError } from "@cloudflare/workers-oauth-provider";
import { z } from "zod";
import { UpstreamSignInError } from "../auth-errors";
import type { UpstreamFetch } from "./identity-provider";

const provider = "GitHub";
const userSchema = z.object({ id: z.number(), login: z.string() });
const emailsSchema = z.array(z.object({ email: z.string(), primary: z.boolean(), verified: z.boolean() }));
const membershipSchema = z.object({ state: z.string() });

export interface GithubApi {
  user(token: string): Promise<{ id: number; login: string; email?: string }>;
  /** Org (or team, when `team` is set) membership, asked with the given token. */
  isMember(token: string, org: string, team: string | undefined, login: string, asUser: boolean): Promise<boolean>;
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
      const user = userSchema.parse(await response.json());
      const emails = await get("/user/emails", token);
      const list = emails.ok ? emailsSchema.safeParse(await emails.json()) : undefined;
      const primary = list?.success ? list.data.find((entry) => entry.primary && entry.verified) : undefined;
      return { ...user, email: primary?.email };
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
