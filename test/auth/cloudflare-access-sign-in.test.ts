import { describe, expect, it } from "vitest";
import { randomToken } from "../../src/auth/pkce";
import { authTestWorker, claudeCallback, type EchoSeen } from "./helpers/auth-test-worker";
import { fakeAccessTeam } from "./helpers/fake-access-team";
import { discover, exchangeCallbackCode, openConsent, postConsent, register } from "./helpers/oauth-test-client";

const origin = "https://slipsnisse.example.com";
const teamDomain = "https://acme.cloudflareaccess.com";
const aud = "aud-tag-for-slipsnisse";
const team = await fakeAccessTeam(teamDomain, aud);
const worker = authTestWorker({ IDP: "cloudflare-access", ACCESS_TEAM_DOMAIN: teamDomain, ACCESS_AUD: aud }, team.fetch);

async function throughAccess(assertion: string | undefined) {
  const discovery = await discover(worker, `${origin}/mcp`);
  const clientId = await register(worker, discovery, [claudeCallback]);
  const verifier = randomToken();
  const session = await openConsent(worker, discovery, { clientId, redirectUri: claudeCallback }, verifier);
  const approved = await postConsent(worker, origin, session);
  const headers: Record<string, string> = { Cookie: session.jar.header() };
  if (assertion) headers["Cf-Access-Jwt-Assertion"] = assertion;
  const callback = await worker.fetch(approved.headers.get("Location") ?? "", { headers });
  return { discovery, clientId, verifier, callback };
}

describe("sign-in behind Cloudflare Access", () => {
  it("signs in the user named by a valid Access assertion", async () => {
    const { discovery, clientId, verifier, callback } = await throughAccess(await team.assertion("nina@acme.example"));
    expect(callback.status).toBe(302);
    const tokens = await exchangeCallbackCode(worker, discovery, clientId, claudeCallback, callback, verifier);
    const api = await worker.fetch(`${origin}/mcp`, { method: "POST", body: "{}", headers: { Authorization: `Bearer ${tokens.access_token}` } });
    expect(((await api.json()) as EchoSeen).props).toEqual({
      userId: "cloudflare-access-sub-nina%40acme.example",
      login: "nina@acme.example",
      email: "nina@acme.example",
      role: "member",
      idp: "cloudflare-access",
    });
  });

  it("refuses a missing assertion, another application's AUD, another team's issuer and an expired assertion", async () => {
    const now = Math.floor(Date.now() / 1000);
    const cases = [
      undefined,
      await team.assertion("omar@acme.example", { aud: ["another-app"] }),
      await team.assertion("omar@acme.example", { iss: "https://evil.cloudflareaccess.com" }),
      await team.assertion("omar@acme.example", { exp: now - 3600 }),
    ];
    for (const assertion of cases) {
      const { callback } = await throughAccess(assertion);
      expect(callback.status).toBe(502);
      expect(callback.headers.get("Location")).toBeNull();
    }
  });
});
