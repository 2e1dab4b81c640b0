import { OAuth2Server } from "oauth2-mock-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectMcpClient } from "../harness/mcp-clients";
import { bearer, signIn } from "../harness/oauth-sign-in";
import { EXPERT, startDevTeamServer, type DevTeamServer } from "./dev-team-server";

/**
 * Team sign-in through a real OpenID Connect server from npm (oauth2-mock-server, which
 * approves every authorization request at once) on loopback as the upstream identity
 * provider of `wrangler dev`: issuer discovery, upstream PKCE and nonce, ID-token validation,
 * then membership by group. Who "signs in" upstream is set per test through the claims the
 * issuer puts in its tokens.
 */
describe("OAuth team access through wrangler dev with an OIDC provider (oauth2-mock-server)", () => {
  const issuer = new OAuth2Server();
  let claims: Record<string, unknown> = {};
  let server: DevTeamServer;

  beforeAll(async () => {
    await issuer.issuer.keys.generate("RS256");
    await issuer.start(0, "127.0.0.1");
    // Fires for the access token and the ID token alike; only the ID token is read.
    issuer.service.on("beforeTokenSigning", (token: { payload: Record<string, unknown> }) => Object.assign(token.payload, claims));
    server = await startDevTeamServer(
      {
        IDP: "oidc",
        OIDC_ISSUER: (issuer.issuer.url ?? "").replace(/\/+$/, ""),
        OIDC_CLIENT_ID: "slipsnisse",
        ALLOWED_GROUPS: "engineering",
        ADMIN_USERS: "boss@example.com",
      },
      { OIDC_CLIENT_SECRET: "mock-client-secret" },
    );
  });
  afterAll(async () => {
    await server?.stop();
    await issuer.stop();
  });

  async function toolNames(accessToken: string): Promise<string[]> {
    const client = await connectMcpClient("v2-2025", `${server.dev.baseUrl}/mcp`, { headers: bearer({ accessToken }) });
    try {
      return (await client.listTools()).map((tool) => tool.name);
    } finally {
      await client.close();
    }
  }

  it("signs a group member in; the token lists the experts, and so does the one from a refresh (membership re-checked)", async () => {
    claims = { sub: "kc-ada", email: "ada@example.com", email_verified: true, preferred_username: "ada", groups: ["engineering"] };
    const ada = await signIn(server.dev.baseUrl);
    expect(await toolNames(ada.accessToken)).toEqual([EXPERT]);
    const next = await ada.refresh();
    expect(await toolNames(next.accessToken)).toEqual([EXPERT]);
  });

  it("gives admin by the verified email only: a preferred_username that reads like the admin's email stays a member (whoami)", async () => {
    const whoami = (accessToken: string) => fetch(`${server.dev.baseUrl}/admin/api/whoami`, { headers: bearer({ accessToken }) });
    claims = { sub: "kc-mallory", email: "mallory@example.com", email_verified: true, preferred_username: "boss@example.com", groups: ["engineering"] };
    const mallory = await signIn(server.dev.baseUrl);
    const refused = await whoami(mallory.accessToken);
    expect(refused.status).toBe(403);
    expect(await refused.text()).toContain("not an admin");
    claims = { sub: "kc-boss", email: "boss@example.com", email_verified: true, preferred_username: "the-boss", groups: ["engineering"] };
    const boss = await signIn(server.dev.baseUrl);
    const admin = await whoami(boss.accessToken);
    expect(admin.status).toBe(200);
    expect(await admin.json()).toMatchObject({ userId: "oidc-kc-boss", role: "admin", idp: "oidc" });
  });

  it("shows a non-member a 403 page and issues no code", async () => {
    claims = { sub: "kc-eve", email: "eve@example.org", email_verified: true, preferred_username: "eve", groups: ["sales"] };
    await expect(signIn(server.dev.baseUrl)).rejects.toThrow(/auth\/callback answered 403.*Not a member of this team.*eve is not a member/);
  });
});
