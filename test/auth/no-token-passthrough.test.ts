import { describe, expect, it } from "vitest";
import { authTestWorker, type EchoSeen, loopbackOrigin } from "./helpers/auth-test-worker";
import { signIn } from "./helpers/oauth-test-client";

describe("the inbound token goes no further than the OAuth provider", () => {
  const worker = authTestWorker();

  it("strips Authorization from the request the API handler gets, and hands it no ctx.auth", async () => {
    const { tokens } = await signIn(worker, `${loopbackOrigin}/mcp`);
    const response = await worker.fetch(`${loopbackOrigin}/mcp`, {
      method: "POST",
      headers: { Authorization: `Bearer ${tokens.access_token}`, "Content-Type": "application/json" },
      body: "{}",
    });
    expect(response.status).toBe(200);
    const seen = (await response.json()) as EchoSeen;
    expect(seen.authorization).toBeNull();
    expect(seen.contextHasAuth).toBe(false);
    expect(seen.url).toBe(`${loopbackOrigin}/mcp`);
  });

  it("puts only the identity in props: no token, no refresh token, nothing beyond UserProps", async () => {
    const { tokens } = await signIn(worker, `${loopbackOrigin}/mcp`);
    const response = await worker.fetch(`${loopbackOrigin}/admin/api/whoami`, { headers: { Authorization: `Bearer ${tokens.access_token}` } });
    const seen = (await response.json()) as EchoSeen;
    const serialized = JSON.stringify(seen);
    expect(serialized).not.toContain(tokens.access_token);
    expect(serialized).not.toContain(tokens.refresh_token ?? "no-refresh-token");
    expect(Object.keys(seen.props as object).sort()).toEqual(["email", "idp", "login", "role", "userId"]);
  });
});
