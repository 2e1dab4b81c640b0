import { describe, expect, it } from "vitest";
import { authTestWorker, claudeCallback, type EchoSeen, loopbackOrigin } from "./helpers/auth-test-worker";
import { authorizeThroughDev, discover, exchangeCode, parseTokens, refresh, register, tokenRequest } from "./helpers/oauth-test-client";

describe("OAuth flow as an MCP client runs it (dev identity provider)", () => {
  const worker = authTestWorker();
  const mcpUrl = `${loopbackOrigin}/mcp`;

  it("discovers the authorization server from the 401 on every API route", async () => {
    for (const path of ["/mcp", "/s/research/mcp", "/sse", "/admin/api/skills"]) {
      const response = await worker.fetch(`${loopbackOrigin}${path}`);
      expect(response.status, path).toBe(401);
      expect(response.headers.get("WWW-Authenticate"), path).toContain(`resource_metadata="${loopbackOrigin}/.well-known/oauth-protected-resource"`);
    }
    const discovery = await discover(worker, mcpUrl);
    expect(discovery.resource).toBe(loopbackOrigin);
    expect(discovery.metadata.issuer).toBe(loopbackOrigin);
    expect(discovery.metadata.code_challenge_methods_supported).toEqual(["S256"]);
    expect(discovery.metadata.registration_endpoint).toBe(`${loopbackOrigin}/register`);
  });

  it("registers, signs in with PKCE S256, calls the API with the user's props and rotates the refresh token", async () => {
    const discovery = await discover(worker, mcpUrl);
    const clientId = await register(worker, discovery, [claudeCallback, "https://claude.com/api/mcp/auth_callback"]);
    const code = await authorizeThroughDev(worker, discovery, { clientId, redirectUri: claudeCallback });
    expect(code.redirect.origin + code.redirect.pathname).toBe(claudeCallback);
    expect(code.redirect.searchParams.get("state")).toBe("client-state-1");
    expect(code.redirect.searchParams.get("iss")).toBe(loopbackOrigin);

    const tokens = await exchangeCode(worker, discovery, clientId, claudeCallback, code);
    expect(tokens.token_type.toLowerCase()).toBe("bearer");
    expect(tokens.refresh_token).toBeTruthy();

    const api = await worker.fetch(`${loopbackOrigin}/s/research/mcp`, {
      method: "POST",
      headers: { Authorization: `Bearer ${tokens.access_token}` },
      body: "{}",
    });
    expect(api.status).toBe(200);
    const seen = (await api.json()) as EchoSeen;
    expect(seen.props).toEqual({ userId: "dev-alice", login: "alice", email: "alice@example.com", role: "member", idp: "dev" });

    const refreshed = await refresh(worker, discovery, clientId, tokens.refresh_token ?? "");
    expect(refreshed.status).toBe(200);
    const next = parseTokens(await refreshed.json());
    expect(next.refresh_token).toBeTruthy();
    expect(next.refresh_token).not.toBe(tokens.refresh_token);
    expect(next.access_token).not.toBe(tokens.access_token);
    const again = await worker.fetch(mcpUrl, { method: "POST", headers: { Authorization: `Bearer ${next.access_token}` }, body: "{}" });
    expect(again.status).toBe(200);
  });

  it("works with the claude.com callback too", async () => {
    const discovery = await discover(worker, mcpUrl);
    const callback = "https://claude.com/api/mcp/auth_callback";
    const clientId = await register(worker, discovery, [callback]);
    const code = await authorizeThroughDev(worker, discovery, { clientId, redirectUri: callback });
    const tokens = await exchangeCode(worker, discovery, clientId, callback, code);
    const api = await worker.fetch(mcpUrl, { method: "POST", headers: { Authorization: `Bearer ${tokens.access_token}` }, body: "{}" });
    expect(api.status).toBe(200);
  });

  it("accepts resource indicators naming an MCP endpoint under the origin, at /authorize and /token, and keeps the env bindings", async () => {
    const discovery = await discover(worker, mcpUrl);
    const clientId = await register(worker, discovery, [claudeCallback]);
    const code = await authorizeThroughDev(worker, discovery, { clientId, redirectUri: claudeCallback, resource: `${loopbackOrigin}/s/research/mcp` });
    const response = await tokenRequest(worker, discovery, {
      grant_type: "authorization_code",
      code: code.code,
      redirect_uri: claudeCallback,
      client_id: clientId,
      code_verifier: code.verifier,
      resource: `${loopbackOrigin}/mcp`,
    });
    expect(response.status).toBe(200);
    const tokens = parseTokens(await response.json());
    const api = await worker.fetch(mcpUrl, { method: "POST", headers: { Authorization: `Bearer ${tokens.access_token}` }, body: "{}" });
    const seen = (await api.json()) as EchoSeen;
    expect(seen.bindings).toEqual(["DB", "CACHE", "OAUTH_KV", "EXPERT_SESSION"]);
  });
});
