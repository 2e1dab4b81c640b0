import { s256Challenge } from "../../../src/auth/pkce";

export interface FakeGithubUser {
  id: number;
  login: string;
  email?: string;
}

/**
 * GitHub's OAuth and REST endpoints as our code calls them, in the test isolate: the code
 * exchange (checking secret, redirect URI and PKCE), /user, /user/emails, /user/teams (paged) and
 * the org membership endpoints, answered for the user token and the server's membership token.
 */
export function fakeGithub(clientSecret: string, membershipToken: string) {
  const members = new Set<string>();
  /** Teams by login, as GitHub lists them on /user/teams (any org). */
  const teams = new Map<string, { org: string; slug: string }[]>();
  let teamsFailWith: number | undefined;
  const codes = new Map<string, { user: FakeGithubUser; challenge: string; redirectUri: string }>();
  const tokens = new Map<string, FakeGithubUser>();

  async function handle(request: Request): Promise<Response> {
    const url = new URL(request.url);
    if (url.host === "github.com" && url.pathname === "/login/oauth/access_token") {
      const form = new URLSearchParams(await request.text());
      const pending = codes.get(form.get("code") ?? "");
      codes.delete(form.get("code") ?? "");
      const pkceOk = pending !== undefined && (await s256Challenge(form.get("code_verifier") ?? "")) === pending.challenge;
      if (!pending || form.get("client_secret") !== clientSecret || form.get("redirect_uri") !== pending.redirectUri || !pkceOk) {
        return Response.json({ error: "bad_verification_code" });
      }
      const token = `gho_${crypto.randomUUID()}`;
      tokens.set(token, pending.user);
      return Response.json({ access_token: token, token_type: "bearer", scope: "read:org" });
    }
    if (url.host !== "api.github.com") return new Response("unknown host", { status: 502 });
    const bearer = (request.headers.get("Authorization") ?? "").replace(/^Bearer /, "");
    const user = tokens.get(bearer);
    if (url.pathname === "/user" && user) return Response.json({ id: user.id, login: user.login });
    if (url.pathname === "/user/emails" && user) return Response.json(user.email ? [{ email: user.email, primary: true, verified: true }] : []);
    if (url.pathname === "/user/teams" && user) {
      if (teamsFailWith !== undefined) return new Response(null, { status: teamsFailWith });
      const perPage = Number(url.searchParams.get("per_page") ?? "30");
      const page = Number(url.searchParams.get("page") ?? "1");
      const all = (teams.get(user.login) ?? []).map(({ org, slug }) => ({ slug, name: slug, organization: { login: org } }));
      return Response.json(all.slice((page - 1) * perPage, page * perPage));
    }
    const asUser = /^\/user\/memberships\/orgs\/([^/]+)$/.exec(url.pathname);
    if (asUser && user) return members.has(user.login) ? Response.json({ state: "active", role: "member" }) : new Response(null, { status: 404 });
    const asServer = /^\/orgs\/([^/]+)\/members\/([^/]+)$/.exec(url.pathname);
    if (asServer && bearer === membershipToken) return new Response(null, { status: members.has(asServer[2] ?? "") ? 204 : 404 });
    return new Response(null, { status: 401 });
  }

  return {
    fetch: ((input: RequestInfo | URL, init?: RequestInit) => handle(new Request(input, init))) satisfies typeof fetch,
    members,
    teams,
    failTeamsWith(status: number | undefined) {
      teamsFailWith = status;
    },
    async signInAt(authorizeUrl: string, user: FakeGithubUser): Promise<string> {
      const url = new URL(authorizeUrl);
      const code = crypto.randomUUID();
      codes.set(code, { user, challenge: url.searchParams.get("code_challenge") ?? "", redirectUri: url.searchParams.get("redirect_uri") ?? "" });
      const back = new URL(url.searchParams.get("redirect_uri") ?? "");
      back.searchParams.set("code", code);
      back.searchParams.set("state", url.searchParams.get("state") ?? "");
      return back.toString();
    },
  };
}
