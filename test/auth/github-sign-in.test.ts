import { describe, expect, it } from "vitest";
import { randomToken } from "../../src/auth/pkce";
import { authTestWorker, claudeCallback, type EchoSeen } from "./helpers/auth-test-worker";
import { fakeGithub, type FakeGithubUser } from "./helpers/fake-github";
import { discover, exchangeCallbackCode, followUpstream, openConsent, postConsent, refresh, register } from "./helpers/oauth-test-client";

const origin = "https://slipsnisse.example.com";
const github = fakeGithub("gh-client-secret", "membership-token");
const worker = authTestWorker(
  {
    IDP: "github",
    GITHUB_CLIENT_ID: "Iv1.test",
    GITHUB_CLIENT_SECRET: "gh-client-secret",
    GITHUB_ORG: "acme",
    GITHUB_MEMBERSHIP_TOKEN: "membership-token",
    ADMIN_USERS: "octo-admin",
  },
  github.fetch,
);

async function signInWithGithub(user: FakeGithubUser) {
  const discovery = await discover(worker, `${origin}/mcp`);
  const clientId = await register(worker, discovery, [claudeCallback]);
  const verifier = randomToken();
  const session = await openConsent(worker, discovery, { clientId, redirectUri: claudeCallback }, verifier);
  const approved = await postConsent(worker, origin, session);
  const upstream = new URL(approved.headers.get("Location") ?? "");
  expect(upstream.origin + upstream.pathname).toBe("https://github.com/login/oauth/authorize");
  expect(upstream.searchParams.get("code_challenge_method")).toBe("S256");
  expect(upstream.searchParams.get("redirect_uri")).toBe(`${origin}/auth/callback`);
  const callback = await followUpstream(worker, session, await github.signInAt(upstream.toString(), user));
  if (callback.status !== 302) return { discovery, clientId, callback, tokens: undefined };
  const tokens = await exchangeCallbackCode(worker, discovery, clientId, claudeCallback, callback, verifier);
  return { discovery, clientId, callback, tokens };
}

describe("sign-in with GitHub, org membership checked at sign-in and at refresh", () => {
  it("lets an org member in with the GitHub identity in props and no GitHub token anywhere", async () => {
    github.members.add("octocat");
    const { tokens } = await signInWithGithub({ id: 583231, login: "octocat", email: "octocat@github.example" });
    const api = await worker.fetch(`${origin}/mcp`, { method: "POST", body: "{}", headers: { Authorization: `Bearer ${tokens?.access_token}` } });
    const seen = (await api.json()) as EchoSeen;
    expect(seen.props).toEqual({ userId: "github-583231", login: "octocat", email: "octocat@github.example", role: "member", idp: "github", groups: [] });
    expect(JSON.stringify(seen)).not.toContain("gho_");
  });

  it("shows a user outside the org a 403 page, and lets a named admin in as admin", async () => {
    const outsider = await signInWithGithub({ id: 1, login: "stranger" });
    expect(outsider.callback.status).toBe(403);
    expect(await outsider.callback.text()).toContain("stranger is not a member");
    const admin = await signInWithGithub({ id: 2, login: "octo-admin" });
    const api = await worker.fetch(`${origin}/mcp`, { method: "POST", body: "{}", headers: { Authorization: `Bearer ${admin.tokens?.access_token}` } });
    expect(((await api.json()) as EchoSeen).props).toMatchObject({ role: "admin" });
  });

  it("refuses the refresh of a user who left the org since signing in", async () => {
    github.members.add("leaver");
    const { discovery, clientId, tokens } = await signInWithGithub({ id: 3, login: "leaver" });
    expect((await refresh(worker, discovery, clientId, tokens?.refresh_token ?? "")).status).toBe(200);
    github.members.delete("leaver");
    const refused = await refresh(worker, discovery, clientId, tokens?.refresh_token ?? "");
    expect(refused.status).toBe(400);
    expect(await refused.text()).toContain("invalid_grant");
  });

  it("fills groups with the user's teams in the org as org/team-slug, over every page and no other org's teams", async () => {
    github.members.add("teamster");
    const many = Array.from({ length: 130 }, (_, i) => ({ org: "acme", slug: `squad-${i}` }));
    github.teams.set("teamster", [{ org: "other-org", slug: "platform" }, { org: "ACME", slug: "platform" }, ...many]);
    const { tokens } = await signInWithGithub({ id: 4, login: "teamster" });
    const api = await worker.fetch(`${origin}/mcp`, { method: "POST", body: "{}", headers: { Authorization: `Bearer ${tokens?.access_token}` } });
    const { groups = [] } = ((await api.json()) as EchoSeen).props as { groups?: string[] };
    expect(groups).toHaveLength(131);
    expect(groups).toContain("acme/platform");
    expect(groups).toContain("acme/squad-129");
    expect(groups).not.toContain("other-org/platform");
  });

  it("shows a 502 page naming GitHub when the teams cannot be read, and writes no grant", async () => {
    github.members.add("unlucky");
    github.failTeamsWith(500);
    try {
      const { callback, tokens } = await signInWithGithub({ id: 5, login: "unlucky" });
      expect(callback.status).toBe(502);
      expect(await callback.text()).toContain("reading your teams");
      expect(tokens).toBeUndefined();
    } finally {
      github.failTeamsWith(undefined);
    }
  });
});
