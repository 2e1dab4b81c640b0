import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { removeMember, restoreMember } from "../../src/auth/member-removals";
import { authTestWorker, claudeCallback, devVars, type EchoSeen, loopbackOrigin } from "./helpers/auth-test-worker";
import { discover, followUpstream, openConsent, parseTokens, postConsent, refresh, register, signIn } from "./helpers/oauth-test-client";
import { randomToken } from "../../src/auth/pkce";

const mcpUrl = `${loopbackOrigin}/mcp`;

async function whoami(worker: ReturnType<typeof authTestWorker>, token: string): Promise<Response> {
  return worker.fetch(mcpUrl, { method: "POST", body: "{}", headers: { Authorization: `Bearer ${token}` } });
}

describe("team membership decides who gets a grant, at sign-in and at every refresh", () => {
  it("shows a non-member a 403 page and issues no code", async () => {
    const worker = authTestWorker({
      ...devVars,
      DEV_USER: "mallory",
      DEV_EMAIL: "mallory@evil.example",
      ALLOWED_USERS: "alice",
      ALLOWED_EMAIL_DOMAINS: "example.com",
    });
    const discovery = await discover(worker, mcpUrl);
    const clientId = await register(worker, discovery, [claudeCallback]);
    const session = await openConsent(worker, discovery, { clientId, redirectUri: claudeCallback }, randomToken());
    const approved = await postConsent(worker, loopbackOrigin, session);
    const callback = await followUpstream(worker, session, approved.headers.get("Location") ?? "");
    expect(callback.status).toBe(403);
    expect(callback.headers.get("Location")).toBeNull();
    expect(callback.headers.get("Content-Type")).toContain("text/html");
    expect(await callback.text()).toContain("mallory is not a member of this team");
  });

  it("lets a member in by email domain", async () => {
    const worker = authTestWorker({ ...devVars, DEV_USER: "carol", DEV_EMAIL: "carol@example.com", ALLOWED_EMAIL_DOMAINS: "example.com" });
    const { tokens } = await signIn(worker, mcpUrl);
    expect((await whoami(worker, tokens.access_token)).status).toBe(200);
  });

  it("refuses the next refresh of a user taken off the allowlist, and revokes the grant", async () => {
    const before = authTestWorker({ ...devVars, DEV_USER: "dave", ALLOWED_USERS: "alice,dave" });
    const { discovery, clientId, tokens } = await signIn(before, mcpUrl);
    const after = authTestWorker({ ...devVars, DEV_USER: "dave", ALLOWED_USERS: "alice" });
    const refused = await refresh(after, discovery, clientId, tokens.refresh_token ?? "");
    expect(refused.status).toBe(400);
    const body = await refused.text();
    expect(body).toContain("invalid_grant");
    expect(body).not.toContain("access_token");
    expect((await whoami(after, tokens.access_token)).status).toBe(401);
  });

  it("refuses sign-in and refresh of a member removed by an admin, and cuts their token at once", async () => {
    const worker = authTestWorker({ ...devVars, DEV_USER: "erin" });
    const { discovery, clientId, tokens } = await signIn(worker, mcpUrl);
    expect(await removeMember(env, worker.helpers(loopbackOrigin), "dev-erin")).toBeGreaterThan(0);
    try {
      expect((await whoami(worker, tokens.access_token)).status).toBe(401);
      expect((await refresh(worker, discovery, clientId, tokens.refresh_token ?? "")).status).toBe(400);
      await expect(signIn(worker, mcpUrl)).rejects.toThrow(/callback 403/);
    } finally {
      await restoreMember(env, "dev-erin");
    }
  });

  it("gives named admins the admin role, and applies a role change at the next refresh", async () => {
    const member = authTestWorker({ ...devVars, DEV_USER: "frank", ADMIN_USERS: "root" });
    const { discovery, clientId, tokens } = await signIn(member, mcpUrl);
    expect(((await (await whoami(member, tokens.access_token)).json()) as EchoSeen).props).toMatchObject({ login: "frank", role: "member" });
    const promoted = authTestWorker({ ...devVars, DEV_USER: "frank", ADMIN_USERS: "root,Frank" });
    const next = parseTokens(await (await refresh(promoted, discovery, clientId, tokens.refresh_token ?? "")).json());
    expect(((await (await whoami(promoted, next.access_token)).json()) as EchoSeen).props).toMatchObject({ login: "frank", role: "admin" });
  });
});
