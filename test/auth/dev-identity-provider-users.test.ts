import { describe, expect, it } from "vitest";
import type { AuthVars } from "../../src/auth/auth-config";
import { authTestWorker, claudeCallback, devVars, type EchoSeen, loopbackOrigin, type TestWorker } from "./helpers/auth-test-worker";
import { type BrowserSession, discover, exchangeCode, followUpstream, openConsent, register } from "./helpers/oauth-test-client";
import { randomToken } from "../../src/auth/pkce";

const multiVars: AuthVars = { ...devVars, DEV_USERS: "alice,bob,carol" };
const mcpUrl = `${loopbackOrigin}/mcp`;

/** Consent page for a fresh client, as a browser gets it. */
async function consentFor(worker: TestWorker) {
  const discovery = await discover(worker, mcpUrl);
  const clientId = await register(worker, discovery, [claudeCallback]);
  const verifier = randomToken();
  const session = await openConsent(worker, discovery, { clientId, redirectUri: claudeCallback, verifier }, verifier);
  return { discovery, clientId, verifier, session };
}

/** The consent form POST with the login the user picked. */
async function approveAs(worker: TestWorker, session: BrowserSession, login: string): Promise<Response> {
  const response = await worker.fetch(`${loopbackOrigin}/authorize`, {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded", Cookie: session.jar.header() },
    body: new URLSearchParams({ handle: session.handle, decision: "approve", login }).toString(),
  });
  session.jar.take(response);
  return response;
}

async function signInAs(worker: TestWorker, login: string): Promise<EchoSeen> {
  const { discovery, clientId, verifier, session } = await consentFor(worker);
  const approved = await approveAs(worker, session, login);
  expect(approved.status).toBe(302);
  const callback = await followUpstream(worker, session, approved.headers.get("Location") ?? "");
  const redirect = new URL(callback.headers.get("Location") ?? "");
  const code = { code: redirect.searchParams.get("code") ?? "", redirect, verifier, callback: "" };
  const tokens = await exchangeCode(worker, discovery, clientId, claudeCallback, code);
  const api = await worker.fetch(mcpUrl, { method: "POST", headers: { Authorization: `Bearer ${tokens.access_token}` }, body: "{}" });
  return (await api.json()) as EchoSeen;
}

describe("the dev identity provider signs in one of several listed local users (DEV_USERS)", () => {
  const worker = authTestWorker(multiVars);

  it("offers DEV_USER first and every DEV_USERS login on the consent page", async () => {
    const { session } = await consentFor(worker);
    const html = await session.consent.text();
    const options = [...html.matchAll(/<option value="([^"]+)"/g)].map((match) => match[1]);
    expect(options).toEqual(["alice", "bob", "carol"]);
    expect(html).toContain('<select name="login">');
  });

  it("signs in the login that was picked, with its own user id", async () => {
    expect((await signInAs(worker, "bob")).props).toEqual({ userId: "dev-bob", login: "bob", role: "member", idp: "dev" });
    expect((await signInAs(worker, "alice")).props).toEqual({ userId: "dev-alice", login: "alice", email: "alice@example.com", role: "member", idp: "dev" });
  });

  it("refuses a login that is not listed, and issues no code", async () => {
    const { session } = await consentFor(worker);
    const refused = await approveAs(worker, session, "mallory");
    expect(refused.status).toBe(403);
    expect(refused.headers.get("Location")).toBeNull();
    expect(await refused.text()).toContain("does not sign in &#34;mallory&#34;");
  });

  it("refuses a posted login when only DEV_USER is configured (no picker, no way around it)", async () => {
    const single = authTestWorker(devVars);
    const { session } = await consentFor(single);
    expect(await session.consent.clone().text()).not.toContain("<select");
    const refused = await approveAs(single, session, "bob");
    expect(refused.status).toBe(403);
    expect(refused.headers.get("Location")).toBeNull();
  });

  it("still refuses everything off loopback or outside a local environment", async () => {
    for (const url of ["https://slipsnisse.example.com/authorize", "http://10.0.0.5:8787/authorize"]) {
      const response = await worker.fetch(url);
      expect(response.status, url).toBe(403);
      expect(await response.text(), url).toContain("dev identity provider refuses");
    }
    const production = authTestWorker({ ...multiVars, ENVIRONMENT: "production" });
    expect((await production.fetch(`${loopbackOrigin}/authorize`)).status).toBe(500);
  });

  it("names DEV_USERS when an entry is not a login", async () => {
    const broken = authTestWorker({ ...multiVars, DEV_USERS: "alice,bad user" });
    const response = await broken.fetch(`${loopbackOrigin}/.well-known/oauth-authorization-server`);
    expect(response.status).toBe(500);
    expect(await response.text()).toContain("DEV_USERS is invalid");
  });
});
