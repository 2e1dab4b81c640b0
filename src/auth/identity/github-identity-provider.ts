import { z } from "zod";
import type { AuthConfig } from "../auth-config";
import { UpstreamSignInError } from "../auth-errors";
import { s256Challenge } from "../pkce";
import { githubApi } from "./github-api";
import type { IdentityProvider, UpstreamFetch } from "./identity-provider";

type GithubConfig = Extract<AuthConfig["idp"], { IDP: "github" }>;

const tokenSchema = z.union([z.object({ access_token: z.string() }), z.object({ error: z.string() })]);

/**
 * GitHub OAuth app sign-in (with PKCE). Membership: an org or a team inside it, asked with the
 * user's token at sign-in (scope read:org), and with GITHUB_MEMBERSHIP_TOKEN at every refresh,
 * because the user's GitHub token is used once and dropped, never stored in the grant.
 */
export function githubIdentityProvider(idp: GithubConfig, upstreamFetch: UpstreamFetch): IdentityProvider {
  const api = githubApi(idp.GITHUB_API_URL, upstreamFetch);
  const org = idp.GITHUB_ORG;
  const membershipToken = idp.GITHUB_MEMBERSHIP_TOKEN;
  const provider: IdentityProvider = {
    name: "GitHub",
    async authorizeUrl({ state, callbackUrl, data }) {
      const url = new URL(`${idp.GITHUB_WEB_URL}/login/oauth/authorize`);
      url.searchParams.set("client_id", idp.GITHUB_CLIENT_ID);
      url.searchParams.set("redirect_uri", callbackUrl);
      url.searchParams.set("scope", org ? "read:user user:email read:org" : "read:user user:email");
      url.searchParams.set("state", state);
      url.searchParams.set("code_challenge", await s256Challenge(data.verifier));
      url.searchParams.set("code_challenge_method", "S256");
      url.searchParams.set("allow_signup", "false");
      return url.toString();
    },
    async finish({ request, callbackUrl, data }) {
      const code = new URL(request.url).searchParams.get("code");
      if (!code) throw new UpstreamSignInError("GitHub", "the callback", "no authorization code came back");
      const token = await exchangeCode(code, callbackUrl, data.verifier);
      const user = await api.user(token);
      const orgMember = org ? await api.isMember(token, org, idp.GITHUB_TEAM, user.login, true) : undefined;
      // Teams are the groups a skill's `access.groups` names (`org/team-slug`). Only with an org:
      // without one the app asks no read:org scope, and teams of unrelated orgs grant nothing.
      // Like OIDC groups they are read at sign-in and kept in the grant until the next sign-in.
      const groups = org && orgMember ? await api.teams(token, org) : undefined;
      return { provider: "github", subject: String(user.id), login: user.login, email: user.email, orgMember, ...(groups ? { groups } : {}) };
    },
  };
  if (org && membershipToken) {
    provider.recheckOrgMembership = (login) => api.isMember(membershipToken, org, idp.GITHUB_TEAM, login, false);
  }
  return provider;

  async function exchangeCode(code: string, redirectUri: string, verifier: string): Promise<string> {
    const response = await upstreamFetch(`${idp.GITHUB_WEB_URL}/login/oauth/access_token`, {
      method: "POST",
      headers: { Accept: "application/json", "Content-Type": "application/x-www-form-urlencoded", "User-Agent": "slipsnisse" },
      body: new URLSearchParams({
        client_id: idp.GITHUB_CLIENT_ID,
        client_secret: idp.GITHUB_CLIENT_SECRET,
        code,
        redirect_uri: redirectUri,
        code_verifier: verifier,
      }),
      signal: AbortSignal.timeout(10_000),
    });
    const parsed = tokenSchema.safeParse(response.ok ? await response.json() : undefined);
    if (!parsed.success) throw new UpstreamSignInError("GitHub", "exchanging the code", `HTTP ${response.status}`);
    if ("error" in parsed.data) throw new UpstreamSignInError("GitHub", "exchanging the code", parsed.data.error);
    return parsed.data.access_token;
  }
}
