import { describe, expect, it } from "vitest";
import { z } from "zod";
import { randomToken } from "../../src/auth/pkce";
import { authTestWorker, claudeCallback, loopbackOrigin } from "./helpers/auth-test-worker";
import {
  authorizeThroughDev,
  discover,
  exchangeCode,
  followUpstream,
  openConsent,
  parseTokens,
  postConsent,
  refresh,
  register,
  tokenRequest,
} from "./helpers/oauth-test-client";

const mcpUrl = `${loopbackOrigin}/mcp`;
const errorBody = z.object({ error: z.string() });

async function expectOAuthError(response: Response, status: number, error: string): Promise<void> {
  expect(response.status).toBe(status);
  const body: unknown = await response.json();
  expect(errorBody.parse(body).error).toBe(error);
  expect(JSON.stringify(body)).not.toContain("access_token");
}

describe("authorization requests and grants that are refused", () => {
  const worker = authTestWorker();

  async function registered() {
    const discovery = await discover(worker, mcpUrl);
    const clientId = await register(worker, discovery, [claudeCallback]);
    return { discovery, clientId };
  }

  it("refuses an unregistered redirect URI locally, without redirecting anywhere", async () => {
    const { discovery, clientId } = await registered();
    const session = await openConsent(worker, discovery, { clientId, redirectUri: "https://attacker.example/callback" }, randomToken());
    expect(session.consent.status).toBe(400);
    expect(session.consent.headers.get("Location")).toBeNull();
    expect(session.handle).toBe("");
  });

  it("refuses plain PKCE before any consent page", async () => {
    const { discovery, clientId } = await registered();
    const session = await openConsent(worker, discovery, { clientId, redirectUri: claudeCallback, method: "plain" }, randomToken());
    expect(session.handle).toBe("");
    expect(session.consent.status).toBe(302);
    const redirect = new URL(session.consent.headers.get("Location") ?? "");
    expect(redirect.searchParams.get("error")).toBe("invalid_request");
    expect(redirect.searchParams.has("code")).toBe(false);
  });

  // RFC 6749 §10.5, OAuth 2.1 §4.1.3: a code is single-use, and an attempt that fails the
  // PKCE check is a use. Otherwise whoever intercepted the code could keep guessing.
  it("refuses a code exchange whose PKCE verifier does not match, and then refuses that code with the right verifier too", async () => {
    const { discovery, clientId } = await registered();
    const code = await authorizeThroughDev(worker, discovery, { clientId, redirectUri: claudeCallback });
    const exchange = (verifier: string) =>
      tokenRequest(worker, discovery, {
        grant_type: "authorization_code",
        code: code.code,
        redirect_uri: claudeCallback,
        client_id: clientId,
        code_verifier: verifier,
      });
    const wrong = await exchange(randomToken());
    expect([...wrong.headers.keys()].filter((name) => name.startsWith("x-slipsnisse"))).toEqual([]);
    await expectOAuthError(wrong, 400, "invalid_grant");
    await expectOAuthError(await exchange(code.verifier), 400, "invalid_grant");
  });

  it("burns a code presented without its code_verifier", async () => {
    const { discovery, clientId } = await registered();
    const code = await authorizeThroughDev(worker, discovery, { clientId, redirectUri: claudeCallback });
    const missing = await tokenRequest(worker, discovery, {
      grant_type: "authorization_code",
      code: code.code,
      redirect_uri: claudeCallback,
      client_id: clientId,
    });
    await expectOAuthError(missing, 400, "invalid_request");
    await expectOAuthError(
      await tokenRequest(worker, discovery, {
        grant_type: "authorization_code",
        code: code.code,
        redirect_uri: claudeCallback,
        client_id: clientId,
        code_verifier: code.verifier,
      }),
      400,
      "invalid_grant",
    );
  });

  it("keeps a code redeemable when the presented code itself is wrong (a guess at someone's grant burns nothing)", async () => {
    const { discovery, clientId } = await registered();
    const code = await authorizeThroughDev(worker, discovery, { clientId, redirectUri: claudeCallback });
    const [userId, grantId] = code.code.split(":");
    const guess = await tokenRequest(worker, discovery, {
      grant_type: "authorization_code",
      code: `${userId}:${grantId}:${randomToken()}`,
      redirect_uri: claudeCallback,
      client_id: clientId,
      code_verifier: randomToken(),
    });
    await expectOAuthError(guess, 400, "invalid_grant");
    expect(
      parseTokens(
        await (
          await tokenRequest(worker, discovery, {
            grant_type: "authorization_code",
            code: code.code,
            redirect_uri: claudeCallback,
            client_id: clientId,
            code_verifier: code.verifier,
          })
        ).json(),
      ).access_token,
    ).toBeTruthy();
  });

  it("refuses a replayed authorization code", async () => {
    const { discovery, clientId } = await registered();
    const code = await authorizeThroughDev(worker, discovery, { clientId, redirectUri: claudeCallback });
    await exchangeCode(worker, discovery, clientId, claudeCallback, code);
    const replay = await tokenRequest(worker, discovery, {
      grant_type: "authorization_code",
      code: code.code,
      redirect_uri: claudeCallback,
      client_id: clientId,
      code_verifier: code.verifier,
    });
    await expectOAuthError(replay, 400, "invalid_grant");
  });

  it("refuses a rotated-out refresh token once its successor has been used", async () => {
    const { discovery, clientId } = await registered();
    const first = await exchangeCode(
      worker,
      discovery,
      clientId,
      claudeCallback,
      await authorizeThroughDev(worker, discovery, { clientId, redirectUri: claudeCallback }),
    );
    const second = parseTokens(await (await refresh(worker, discovery, clientId, first.refresh_token ?? "")).json());
    const third = await refresh(worker, discovery, clientId, second.refresh_token ?? "");
    expect(third.status).toBe(200);
    await expectOAuthError(await refresh(worker, discovery, clientId, first.refresh_token ?? ""), 400, "invalid_grant");
  });

  it("refuses a consent POST that lacks the browser's __Host- binding cookie (CSRF)", async () => {
    const { discovery, clientId } = await registered();
    const session = await openConsent(worker, discovery, { clientId, redirectUri: claudeCallback }, randomToken());
    expect(session.consent.headers.getSetCookie().join("\n")).toMatch(/__Host-oauth-consent-[^=]*=.*Secure.*HttpOnly/i);
    const forged = await postConsent(worker, loopbackOrigin, session, "approve", false);
    expect(forged.status).toBe(400);
    expect(forged.headers.get("Location")).toBeNull();
    // The real browser's POST still works afterwards: the forged one consumed nothing.
    const real = await postConsent(worker, loopbackOrigin, session);
    expect(real.status).toBe(302);
  });

  it("sends frame-ancestors 'none' and a CSRF-bound form on the consent page naming the team, client, redirect URI and scopes", async () => {
    const { discovery, clientId } = await registered();
    const session = await openConsent(worker, discovery, { clientId, redirectUri: claudeCallback }, randomToken());
    expect(session.consent.headers.get("Content-Security-Policy")).toContain("frame-ancestors 'none'");
    const html = await session.consent.text();
    expect(html).toContain("Test MCP Client");
    expect(html).toContain(claudeCallback);
    expect(html).toContain("<code>mcp</code>");
    expect(html).toContain("Slipsnisse of team <strong>default</strong> at <strong>127.0.0.1:8787</strong>");
    // Allow first: the form's default button, the one Enter submits.
    expect(html.indexOf('value="approve"')).toBeLessThan(html.indexOf('value="deny"'));
    expect(session.handle.length).toBeGreaterThan(20);
  });

  it("refuses a replayed state at the sign-in callback", async () => {
    const { discovery, clientId } = await registered();
    const session = await openConsent(worker, discovery, { clientId, redirectUri: claudeCallback }, randomToken());
    const approved = await postConsent(worker, loopbackOrigin, session);
    const callbackUrl = approved.headers.get("Location") ?? "";
    const cookiesBefore = session.jar.header();
    const first = await followUpstream(worker, session, callbackUrl);
    expect(first.status).toBe(302);
    const replay = await worker.fetch(callbackUrl, { headers: { Cookie: cookiesBefore } });
    expect(replay.status).toBe(400);
    expect(replay.headers.get("Location")).toBeNull();
  });

  it("a Deny on the consent page sends the client access_denied and no code", async () => {
    const { discovery, clientId } = await registered();
    const session = await openConsent(worker, discovery, { clientId, redirectUri: claudeCallback }, randomToken());
    const denied = await postConsent(worker, loopbackOrigin, session, "deny");
    const redirect = new URL(denied.headers.get("Location") ?? "");
    expect(redirect.searchParams.get("error")).toBe("access_denied");
    expect(redirect.searchParams.has("code")).toBe(false);
  });
});
