import { describe, expect, it } from "vitest";
import { randomToken } from "../../src/auth/pkce";
import { fakeOidcIssuer, type FakeOidcUser } from "./helpers/fake-oidc-issuer";
import { authTestWorker, claudeCallback, type EchoSeen } from "./helpers/auth-test-worker";
import { discover, exchangeCallbackCode, followUpstream, openConsent, postConsent, refresh, register } from "./helpers/oauth-test-client";
import { testSigningKey } from "./helpers/test-signing-key";

const origin = "https://slipsnisse.example.com";
const issuerUrl = "https://idp.example.org/realms/team";
const issuer = await fakeOidcIssuer(issuerUrl, "slipsnisse", "oidc-client-secret");
const vars = {
  IDP: "oidc",
  OIDC_ISSUER: issuerUrl,
  OIDC_CLIENT_ID: "slipsnisse",
  OIDC_CLIENT_SECRET: "oidc-client-secret",
  ALLOWED_EMAIL_DOMAINS: "example.com",
  ALLOWED_GROUPS: "engineering",
};
const worker = authTestWorker(vars, issuer.fetch);

/** MCP client + browser + the upstream OIDC sign-in; returns the callback's answer. */
async function signInWithOidc(user: FakeOidcUser) {
  const discovery = await discover(worker, `${origin}/mcp`);
  const clientId = await register(worker, discovery, [claudeCallback]);
  const verifier = randomToken();
  const session = await openConsent(worker, discovery, { clientId, redirectUri: claudeCallback }, verifier);
  const approved = await postConsent(worker, origin, session);
  const upstreamAuthorize = approved.headers.get("Location") ?? `${approved.status} ${await approved.clone().text()}`;
  expect(upstreamAuthorize).toMatch(new RegExp(`^${issuerUrl}/authorize\\?`));
  const callbackUrl = issuer.signInAt(upstreamAuthorize, user);
  const callback = await followUpstream(worker, session, callbackUrl);
  return { discovery, clientId, verifier, callback, callbackUrl, session };
}

describe("sign-in through an OpenID Connect provider", () => {
  it("signs a group member in with PKCE and a verified ID token; props carry the OIDC identity", async () => {
    const { discovery, clientId, verifier, callback } = await signInWithOidc({
      sub: "user:42",
      preferred_username: "grace",
      email: "grace@elsewhere.org",
      email_verified: true,
      groups: ["engineering", "oncall"],
    });
    expect(callback.status).toBe(302);
    const tokens = await exchangeCallbackCode(worker, discovery, clientId, claudeCallback, callback, verifier);
    const api = await worker.fetch(`${origin}/mcp`, { method: "POST", body: "{}", headers: { Authorization: `Bearer ${tokens.access_token}` } });
    expect(((await api.json()) as EchoSeen).props).toEqual({
      userId: "oidc-user%3A42",
      login: "grace",
      email: "grace@elsewhere.org",
      role: "member",
      idp: "oidc",
      groups: ["engineering", "oncall"],
    });
    expect((await refresh(worker, discovery, clientId, tokens.refresh_token ?? "")).status).toBe(200);
  });

  it("admits by verified email domain, and ignores an unverified email", async () => {
    expect((await signInWithOidc({ sub: "h1", email: "heidi@example.com", email_verified: true })).callback.status).toBe(302);
    const unverified = await signInWithOidc({ sub: "h2", email: "ivan@example.com", email_verified: false });
    expect(unverified.callback.status).toBe(403);
    expect(await unverified.callback.text()).toContain("not a member");
  });

  // Issue 35: a non-boolean email_verified threw a validation error, and /auth/callback answered 500 to everyone of that provider.
  it("takes anything but boolean true in email_verified as unverified, and answers it with a refusal page, never a 500", async () => {
    for (const [index, claim] of ["TRUE", 1, "true", "yes", null, { value: true }, [true]].entries()) {
      const { callback } = await signInWithOidc({ sub: `ev${index}`, email: "olga@example.com", email_verified: claim });
      const page = await callback.text();
      expect(callback.status, JSON.stringify(claim)).toBe(403);
      expect(callback.headers.get("Location")).toBeNull();
      expect(page).toContain("not a member");
      expect(page).not.toContain("olga@example.com");
    }
  });

  it("a claim of the wrong type never makes a 500: names fall back, a bad nonce is a refused sign-in", async () => {
    const odd = await signInWithOidc({ sub: "odd1", preferred_username: 42, email: "pat@example.com", email_verified: true, groups: ["sales"] });
    expect(odd.callback.status).toBe(302);
    const tokens = await exchangeCallbackCode(worker, odd.discovery, odd.clientId, claudeCallback, odd.callback, odd.verifier);
    const api = await worker.fetch(`${origin}/mcp`, { method: "POST", body: "{}", headers: { Authorization: `Bearer ${tokens.access_token}` } });
    expect(((await api.json()) as EchoSeen).props).toMatchObject({ login: "pat@example.com", email: "pat@example.com" });

    const typedEmail = await signInWithOidc({ sub: "odd2", email: ["quinn@example.com"], email_verified: true, groups: ["engineering"], name: { first: "q" } });
    expect(typedEmail.callback.status).toBe(302);
    for (const nonce of [5, null, ["n"]]) {
      const { callback } = await signInWithOidc({ sub: "odd3", email: "rob@example.com", email_verified: true, nonce });
      expect(callback.status, JSON.stringify(nonce)).toBe(502);
      expect(callback.headers.get("Location")).toBeNull();
      await expect(callback.text()).resolves.toContain("nonce does not match");
    }
  });

  it("shows a non-member a 403 page and no code", async () => {
    const { callback } = await signInWithOidc({ sub: "m1", email: "mallory@evil.example", email_verified: true, groups: ["sales"] });
    expect(callback.status).toBe(403);
    expect(callback.headers.get("Location")).toBeNull();
  });

  it("refuses ID tokens that are forged, for another audience, replayed with another nonce, or expired", async () => {
    const stranger = await testSigningKey("issuer-key-1");
    for (const tamper of [{ signWith: stranger }, { audience: "another-client" }, { nonce: "other-nonce" }, { expiresInSeconds: -600 }]) {
      issuer.setTamper(tamper);
      try {
        const { callback } = await signInWithOidc({ sub: "t1", email: "judy@example.com", email_verified: true });
        expect(callback.status, JSON.stringify(Object.keys(tamper))).toBe(502);
        expect(callback.headers.get("Location")).toBeNull();
        expect(await callback.text()).toContain("verifying");
      } finally {
        issuer.setTamper({});
      }
    }
  });

  it("sends S256 PKCE upstream and refuses a replayed state at the callback", async () => {
    const before = issuer.seenChallenges.length;
    const { callback, callbackUrl, session } = await signInWithOidc({ sub: "k1", email: "kim@example.com", email_verified: true });
    expect(callback.status).toBe(302);
    expect(issuer.seenChallenges.length).toBe(before + 1);
    const replay = await worker.fetch(callbackUrl, { headers: { Cookie: session.jar.header() } });
    expect(replay.status).toBe(400);
    expect(replay.headers.get("Location")).toBeNull();
  });

  it("re-checks groups against today's ALLOWED_GROUPS at refresh", async () => {
    const { discovery, clientId, verifier, callback } = await signInWithOidc({
      sub: "l1",
      email: "leo@elsewhere.org",
      email_verified: true,
      groups: ["engineering"],
    });
    const tokens = await exchangeCallbackCode(worker, discovery, clientId, claudeCallback, callback, verifier);
    const regrouped = authTestWorker({ ...vars, ALLOWED_GROUPS: "platform" }, issuer.fetch);
    const refused = await refresh(regrouped, discovery, clientId, tokens.refresh_token ?? "");
    expect(refused.status).toBe(400);
    expect(await refused.text()).toContain("invalid_grant");
  });
});
