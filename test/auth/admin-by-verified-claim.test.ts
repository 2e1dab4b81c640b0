import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { randomToken } from "../../src/auth/pkce";
import worker from "../../src/index";
import { csrfIn } from "../dashboard/dashboard-test-client";
import { authTestWorker, claudeCallback, type EchoSeen, type TestWorker } from "./helpers/auth-test-worker";
import { fakeAccessTeam } from "./helpers/fake-access-team";
import { fakeGithub } from "./helpers/fake-github";
import { fakeOidcIssuer, type FakeOidcUser } from "./helpers/fake-oidc-issuer";
import { discover, exchangeCallbackCode, followUpstream, openConsent, postConsent, refresh, register, parseTokens } from "./helpers/oauth-test-client";

/**
 * Issue 18, defect 1: ADMIN_USERS and ALLOWED_USERS match only what the identity provider vouches
 * for. A user who chooses their own OIDC `preferred_username` (or Access subject) to read like an
 * admin's email stays a member: in the OAuth grant, in /admin/api/whoami, in the members API and
 * in the dashboard. Through the whole Worker (src/index.ts), with the issuer reached through the
 * global fetch the Worker's identity provider uses.
 */
const origin = "http://127.0.0.1:8787";
// An issuer of its own: the Worker caches an issuer's discovery and keys per URL for minutes, and
// the workerd test files share one isolate (vitest.config.ts), so two fake issuers with one URL and
// different keys would each see the other's cached keys.
const issuerUrl = "https://idp.example.org/realms/claims";
const issuer = await fakeOidcIssuer(issuerUrl, "slipsnisse", "oidc-client-secret");
const oidcVars = {
  AUTH: "oauth",
  ENVIRONMENT: "test",
  IDP: "oidc",
  OIDC_ISSUER: issuerUrl,
  OIDC_CLIENT_ID: "slipsnisse",
  OIDC_CLIENT_SECRET: "oidc-client-secret",
  ALLOWED_EMAIL_DOMAINS: "example.com",
  ALLOWED_GROUPS: "engineering",
  ADMIN_USERS: "boss@example.com,sub:Kc-Root",
  DASHBOARD_SESSION_KEY: "admin-claims-test-session-key-0123456789abcdef",
};

const mallory: FakeOidcUser = { sub: "kc-mallory", email: "mallory@example.com", email_verified: true, preferred_username: "boss@example.com" };

/** The Worker itself as the OAuth test client's TestWorker. */
const wholeWorker: TestWorker = {
  async fetch(input, init) {
    const ctx = createExecutionContext();
    const request = new Request(input, { redirect: "manual", ...init });
    const response = await worker.fetch(request as Parameters<typeof worker.fetch>[0], { ...env, ...oidcVars } as Env, ctx);
    await waitOnExecutionContext(ctx);
    return response;
  },
  helpers() {
    throw new Error("not used: the tests go through HTTP only");
  },
};

beforeEach(() => {
  const realFetch = globalThis.fetch;
  vi.spyOn(globalThis, "fetch").mockImplementation((input, init) =>
    new Request(input, init).url.startsWith(`${issuerUrl}/`) ? issuer.fetch(input, init) : realFetch(input, init),
  );
});
afterEach(() => {
  vi.restoreAllMocks();
});

/** An MCP client's OAuth sign-in through the issuer; returns its tokens. */
async function grantFor(user: FakeOidcUser) {
  const discovery = await discover(wholeWorker, `${origin}/mcp`);
  const clientId = await register(wholeWorker, discovery, [claudeCallback]);
  const verifier = randomToken();
  const session = await openConsent(wholeWorker, discovery, { clientId, redirectUri: claudeCallback }, verifier);
  const approved = await postConsent(wholeWorker, origin, session);
  const callback = await followUpstream(wholeWorker, session, issuer.signInAt(approved.headers.get("Location") ?? "", user));
  expect(callback.status, await callback.clone().text()).toBe(302);
  const tokens = await exchangeCallbackCode(wholeWorker, discovery, clientId, claudeCallback, callback, verifier);
  return { discovery, clientId, tokens };
}

function whoami(accessToken: string): Promise<Response> {
  return wholeWorker.fetch(`${origin}/admin/api/whoami`, { headers: { Authorization: `Bearer ${accessToken}` } });
}

/** The dashboard's own sign-in through the issuer; returns the session cookie. */
async function dashboardCookieFor(user: FakeOidcUser): Promise<string> {
  const start = await wholeWorker.fetch(`${origin}/admin/login/start`);
  expect(start.status).toBe(302);
  const loginCookie = start.headers.getSetCookie().map((line) => line.split(";")[0] ?? "");
  const back = new URL(issuer.signInAt(start.headers.get("Location") ?? "", user));
  expect(back.pathname).toBe("/admin/login/callback");
  const callback = await wholeWorker.fetch(`${origin}${back.pathname}${back.search}`, { headers: { cookie: loginCookie.join("; ") } });
  expect(callback.status, await callback.clone().text()).toBe(302);
  const cookie = callback.headers
    .getSetCookie()
    .map((line) => line.split(";")[0] ?? "")
    .find((pair) => pair.startsWith("__Host-slipsnisse-dashboard=") && pair.length > "__Host-slipsnisse-dashboard=".length);
  if (!cookie) throw new Error("no dashboard session cookie");
  return cookie;
}

describe("OIDC: the admin list matches the verified email or sub:<subject>, never preferred_username", () => {
  it("keeps a verified mallory@ whose preferred_username reads boss@example.com a member: grant, refresh, whoami, members API", async () => {
    const { discovery, clientId, tokens } = await grantFor(mallory);
    const refused = await whoami(tokens.access_token);
    expect(refused.status).toBe(403);
    expect(await refused.text()).toContain("not an admin");
    const refreshed = await refresh(wholeWorker, discovery, clientId, tokens.refresh_token ?? "");
    expect(refreshed.status).toBe(200);
    expect((await whoami(parseTokens(await refreshed.json()).access_token)).status).toBe(403);

    // The real admin, by verified email, sees mallory listed as a member.
    const boss = await grantFor({ sub: "kc-boss", email: "boss@example.com", email_verified: true, preferred_username: "the-boss" });
    const bossWhoami = await whoami(boss.tokens.access_token);
    expect(bossWhoami.status).toBe(200);
    expect(await bossWhoami.json()).toMatchObject({ userId: "oidc-kc-boss", role: "admin", idp: "oidc" });
    const members = await wholeWorker.fetch(`${origin}/admin/api/members`, { headers: { Authorization: `Bearer ${boss.tokens.access_token}` } });
    const listed = ((await members.json()) as { members: Array<{ userId: string; role: string; login: string }> }).members;
    expect(listed.find((member) => member.userId === "oidc-kc-mallory")).toMatchObject({ role: "member", login: "boss@example.com" });
  });

  it("does not take an unverified email for the admin's", async () => {
    const { tokens } = await grantFor({ sub: "kc-eve", email: "boss@example.com", email_verified: false, preferred_username: "eve", groups: ["engineering"] });
    expect((await whoami(tokens.access_token)).status).toBe(403);
  });

  it("matches sub:<subject> exactly, case included", async () => {
    const root = await grantFor({ sub: "Kc-Root", email: "root@example.com", email_verified: true });
    expect(await (await whoami(root.tokens.access_token)).json()).toMatchObject({ role: "admin" });
    const lookalike = await grantFor({ sub: "kc-root", email: "other@example.com", email_verified: true, preferred_username: "sub:Kc-Root" });
    expect((await whoami(lookalike.tokens.access_token)).status).toBe(403);
  });

  it("shows mallory the dashboard's 'Admins only' page, and the real admin the overview", async () => {
    const cookie = await dashboardCookieFor(mallory);
    const page = await wholeWorker.fetch(`${origin}/admin`, { headers: { cookie } });
    expect(page.status).toBe(403);
    expect(await page.text()).toContain("Admins only");
    const boss = await dashboardCookieFor({ sub: "kc-boss", email: "boss@example.com", email_verified: true });
    const overview = await wholeWorker.fetch(`${origin}/admin`, { headers: { cookie: boss } });
    expect(overview.status).toBe(200);
    expect(csrfIn(await overview.text())).toBeTruthy();
  });
});

describe("GitHub: github:<numeric id> entries survive a rename and do not follow a re-registered login", () => {
  const github = fakeGithub("gh-client-secret", "membership-token");
  const githubWorker = authTestWorker(
    {
      IDP: "github",
      GITHUB_CLIENT_ID: "Iv1.test",
      GITHUB_CLIENT_SECRET: "gh-client-secret",
      GITHUB_ORG: "acme",
      GITHUB_MEMBERSHIP_TOKEN: "membership-token",
      ADMIN_USERS: "github:4242",
    },
    github.fetch,
  );

  async function propsFor(user: { id: number; login: string }): Promise<unknown> {
    github.members.add(user.login);
    const discovery = await discover(githubWorker, `${origin}/mcp`);
    const clientId = await register(githubWorker, discovery, [claudeCallback]);
    const verifier = randomToken();
    const session = await openConsent(githubWorker, discovery, { clientId, redirectUri: claudeCallback }, verifier);
    const approved = await postConsent(githubWorker, origin, session);
    const callback = await followUpstream(githubWorker, session, await github.signInAt(approved.headers.get("Location") ?? "", user));
    const tokens = await exchangeCallbackCode(githubWorker, discovery, clientId, claudeCallback, callback, verifier);
    const seen = await githubWorker.fetch(`${origin}/mcp`, { method: "POST", body: "{}", headers: { Authorization: `Bearer ${tokens.access_token}` } });
    return ((await seen.json()) as EchoSeen).props;
  }

  it("gives the admin role to id 4242 under any login, and not to another account that took its old login", async () => {
    expect(await propsFor({ id: 4242, login: "octo-lead" })).toMatchObject({ role: "admin", userId: "github-4242" });
    expect(await propsFor({ id: 4242, login: "octo-renamed" })).toMatchObject({ role: "admin" });
    expect(await propsFor({ id: 777, login: "octo-lead" })).toMatchObject({ role: "member", userId: "github-777" });
  });
});

describe("Cloudflare Access: only the verified assertion's email (or sub:<subject>) matches", () => {
  // Its own team domain: the JWKS cache is per URL and shared by every test file in this workerd.
  const teamDomain = "https://acme-admin-claims.cloudflareaccess.com";
  const aud = "aud-tag-for-slipsnisse";

  it("gives no admin role to an assertion without email whose subject reads like the admin's email", async () => {
    const team = await fakeAccessTeam(teamDomain, aud);
    const accessWorker = authTestWorker(
      { IDP: "cloudflare-access", ACCESS_TEAM_DOMAIN: teamDomain, ACCESS_AUD: aud, ADMIN_USERS: "boss@example.com" },
      team.fetch,
    );
    async function propsFor(assertion: string): Promise<unknown> {
      const discovery = await discover(accessWorker, `${origin}/mcp`);
      const clientId = await register(accessWorker, discovery, [claudeCallback]);
      const verifier = randomToken();
      const session = await openConsent(accessWorker, discovery, { clientId, redirectUri: claudeCallback }, verifier);
      const approved = await postConsent(accessWorker, origin, session);
      const callback = await accessWorker.fetch(approved.headers.get("Location") ?? "", {
        headers: { Cookie: session.jar.header(), "Cf-Access-Jwt-Assertion": assertion },
      });
      const tokens = await exchangeCallbackCode(accessWorker, discovery, clientId, claudeCallback, callback, verifier);
      const seen = await accessWorker.fetch(`${origin}/mcp`, { method: "POST", body: "{}", headers: { Authorization: `Bearer ${tokens.access_token}` } });
      return ((await seen.json()) as EchoSeen).props;
    }
    expect(await propsFor(await team.assertion("mallory@example.com", { email: undefined, sub: "boss@example.com" }))).toMatchObject({
      role: "member",
      login: "boss@example.com",
    });
    expect(await propsFor(await team.assertion("boss@example.com"))).toMatchObject({ role: "admin" });
  });
});
