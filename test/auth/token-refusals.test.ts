import { afterEach, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { authTestWorker, claudeCallback, devVars, loopbackOrigin } from "./helpers/auth-test-worker";
import { randomToken } from "../../src/auth/pkce";
import { authorizeThroughDev, discover, openConsent, register, signIn, tokenRequest } from "./helpers/oauth-test-client";

const mcpUrl = `${loopbackOrigin}/mcp`;

function expectChallenge(response: Response, error?: string): void {
  expect(response.status).toBe(401);
  const header = response.headers.get("WWW-Authenticate") ?? "";
  expect(header).toMatch(/^Bearer /);
  if (error) expect(header).toContain(`error="${error}"`);
}

describe("tokens the API refuses", () => {
  const worker = authTestWorker();
  const call = (token?: string, url = mcpUrl) =>
    worker.fetch(url, { method: "POST", body: "{}", headers: token === undefined ? {} : { Authorization: `Bearer ${token}` } });

  afterEach(() => {
    vi.useRealTimers();
  });

  it("refuses a request without a token with a 401 that points at the resource metadata", async () => {
    const response = await call();
    expectChallenge(response);
    expect(response.headers.get("WWW-Authenticate")).toContain(`resource_metadata="${loopbackOrigin}/.well-known/oauth-protected-resource"`);
  });

  it("refuses a forged token, whether random or shaped like a real one", async () => {
    const { tokens } = await signIn(worker, mcpUrl);
    const [userId, grantId] = tokens.access_token.split(":");
    expectChallenge(await call("not-a-token"), "invalid_token");
    expectChallenge(await call(`${userId}:${grantId}:forgedsecretforgedsecretforgedsecret`), "invalid_token");
  });

  it("refuses an expired token", async () => {
    const { tokens } = await signIn(worker, mcpUrl);
    expect((await call(tokens.access_token)).status).toBe(200);
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(Date.now() + (tokens.expires_in + 60) * 1000);
    expectChallenge(await call(tokens.access_token), "invalid_token");
  });

  it("refuses a revoked token", async () => {
    const { discovery, clientId, tokens } = await signIn(worker, mcpUrl);
    const revoked = await tokenRequest(worker, discovery, { token: tokens.access_token, token_type_hint: "access_token", client_id: clientId });
    expect(revoked.status).toBe(200);
    expectChallenge(await call(tokens.access_token), "invalid_token");
  });

  it("refuses a token in the query string without calling the API handler", async () => {
    const { tokens } = await signIn(worker, mcpUrl);
    const response = await worker.fetch(`${mcpUrl}?access_token=${encodeURIComponent(tokens.access_token)}`, { method: "POST", body: "{}" });
    expect(response.status).toBe(400);
    expect(response.headers.get("WWW-Authenticate")).toContain('error="invalid_request"');
    expect(await response.text()).not.toContain("userId");
  });

  it("refuses a token issued for another resource (another origin sharing the same storage)", async () => {
    const other = authTestWorker(devVars);
    const { tokens } = await signIn(other, "http://localhost:8787/mcp");
    expect(
      (await other.fetch("http://localhost:8787/mcp", { method: "POST", body: "{}", headers: { Authorization: `Bearer ${tokens.access_token}` } })).status,
    ).toBe(200);
    expectChallenge(await call(tokens.access_token), "invalid_token");
  });

  it("issues no code or token for a resource on another origin", async () => {
    const discovery = await discover(worker, mcpUrl);
    const clientId = await register(worker, discovery, [claudeCallback]);
    const session = await openConsent(worker, discovery, { clientId, redirectUri: claudeCallback, resource: "https://evil.example/mcp" }, randomToken());
    expect(session.consent.status).toBe(302);
    const refused = new URL(session.consent.headers.get("Location") ?? "");
    expect(refused.searchParams.get("error")).toBe("invalid_target");
    expect(refused.searchParams.has("code")).toBe(false);
    const code = await authorizeThroughDev(worker, discovery, { clientId, redirectUri: claudeCallback });
    const response = await tokenRequest(worker, discovery, {
      grant_type: "authorization_code",
      code: code.code,
      redirect_uri: claudeCallback,
      client_id: clientId,
      code_verifier: code.verifier,
      resource: "https://evil.example/mcp",
    });
    expect(response.status).toBe(400);
    expect(z.object({ error: z.string() }).parse(await response.json()).error).toBe("invalid_target");
  });

  describe("on the admin API", () => {
    const adminUrl = `${loopbackOrigin}/admin/api/catalog`;
    const refusalSchema = z.object({ error: z.string().min(1), fix: z.string().min(1) });

    it("answers a request without a token with {error, fix} JSON and keeps the Bearer challenge", async () => {
      const response = await call(undefined, adminUrl);
      expectChallenge(response);
      expect(response.headers.get("Content-Type")).toContain("application/json");
      const body = refusalSchema.parse(await response.json());
      expect(body.error).toContain("no Authorization header");
      expect(body.fix).toContain("ADMIN_TOKEN");
    });

    it("answers a token it does not know with {error, fix} JSON naming both kinds of token", async () => {
      const response = await call("not-a-token", adminUrl);
      expectChallenge(response, "invalid_token");
      const body = refusalSchema.parse(await response.json());
      expect(body.error).toContain("not this Worker's ADMIN_TOKEN");
      expect(body.fix).toContain("sign in again");
      expect(JSON.stringify(body)).not.toContain("not-a-token");
    });

    it("leaves the MCP endpoint's challenge as the OAuth clients expect it", async () => {
      const response = await call();
      expect(await response.text()).toBe("");
    });
  });
});
