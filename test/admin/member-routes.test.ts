import { createExecutionContext, env, runInDurableObject, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/app";
import { forgetSeenThrottle, MEMBER_SEEN_INTERVAL_MS, recordSeen } from "../../src/auth/member-directory";
import type { UserProps } from "../../src/auth/user-props";
import { connectionsStub } from "../../src/downstream/connections/connection-target";
import type { UserConnections } from "../../src/downstream/connections/user-connections";
import { contextWithProps } from "../../src/execution-context";
import { authTestWorker, devVars, loopbackOrigin, type TestWorker } from "../auth/helpers/auth-test-worker";
import { refresh, signIn } from "../auth/helpers/oauth-test-client";

const mcpUrl = `${loopbackOrigin}/mcp`;
const root: UserProps = { userId: "dev-root", login: "root", role: "admin" };

/** The Worker's app with the test worker's OAuth provider behind its member routes, called as `user`. */
async function adminCall(worker: TestWorker, method: string, path: string, user: UserProps = root): Promise<{ status: number; body: Record<string, unknown> }> {
  const ctx = createExecutionContext();
  const app = createApp({ oauthHelpers: () => worker.helpers(loopbackOrigin) });
  const response = await app.fetch(new Request(`${loopbackOrigin}/admin/api${path}`, { method }), env, contextWithProps(ctx, user));
  await waitOnExecutionContext(ctx);
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

function apiCall(worker: TestWorker, token: string): Promise<Response> {
  return worker.fetch(mcpUrl, { method: "POST", body: "{}", headers: { Authorization: `Bearer ${token}` } });
}

interface ListedMember {
  userId: string;
  login: string;
  role: string;
  firstSeenAt: string;
  lastSeenAt: string;
  grants: unknown[];
}

describe("members", () => {
  it("lists who signed in, with role, first and last seen and active grants", async () => {
    const worker = authTestWorker({ ...devVars, DEV_USER: "hana" });
    const before = Date.now();
    await signIn(worker, mcpUrl);
    await signIn(worker, mcpUrl);
    const { status, body } = await adminCall(worker, "GET", "/members");
    expect(status).toBe(200);
    const hana = (body.members as ListedMember[]).find((member) => member.userId === "dev-hana");
    expect(hana).toMatchObject({ login: "hana", role: "member" });
    expect(hana?.grants).toHaveLength(2);
    expect(Date.parse(hana?.firstSeenAt ?? "")).toBeGreaterThanOrEqual(before - 1000);
    expect(Date.parse(hana?.lastSeenAt ?? "")).toBeGreaterThanOrEqual(Date.parse(hana?.firstSeenAt ?? ""));
  });

  it("revoking a member's grants refuses their access token on the very next request, and their refresh token", async () => {
    const worker = authTestWorker({ ...devVars, DEV_USER: "ivan" });
    const { discovery, clientId, tokens } = await signIn(worker, mcpUrl);
    expect((await apiCall(worker, tokens.access_token)).status).toBe(200);

    const revoked = await adminCall(worker, "POST", "/members/ivan/revoke");
    expect(revoked).toEqual({ status: 200, body: { userId: "dev-ivan", login: "ivan", revokedGrants: 1, removedConnections: 0 } });
    // The access token has most of its hour left; it is refused now, not at its expiry.
    expect((await apiCall(worker, tokens.access_token)).status).toBe(401);
    expect((await refresh(worker, discovery, clientId, tokens.refresh_token ?? "")).status).toBe(400);
    const listed = (await adminCall(worker, "GET", "/members")).body.members as ListedMember[];
    expect(listed.find((member) => member.userId === "dev-ivan")?.grants).toEqual([]);
  });

  it("revoking a member removes their connections to downstream servers too", async () => {
    const worker = authTestWorker({ ...devVars, DEV_USER: "jules" });
    await signIn(worker, mcpUrl);
    const stub = connectionsStub(env, { kind: "user", userId: "dev-jules" });
    await runInDurableObject(stub, async (instance: UserConnections) => {
      const writer = instance as unknown as { store(...args: unknown[]): Promise<void> };
      await writer.store(
        "https://linear.example/mcp",
        { serverId: "linear", skill: "default", url: "https://linear.example/mcp", connection: "user" },
        { access_token: "acc-jules", token_type: "Bearer" },
        { client_id: "c" },
        undefined,
        "jules",
        Date.now(),
      );
    });
    expect(await stub.list()).toHaveLength(1);
    const revoked = await adminCall(worker, "POST", "/members/jules/revoke");
    expect(revoked.body).toMatchObject({ userId: "dev-jules", removedConnections: 1 });
    expect(await stub.list()).toEqual([]);
  });

  it("refuses an unknown member and a non-admin with {error, fix}", async () => {
    const worker = authTestWorker();
    const unknown = await adminCall(worker, "POST", "/members/nobody-here/revoke");
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({ error: expect.stringContaining("nobody-here"), fix: expect.stringContaining("/admin/api/members") });
    const member = await adminCall(worker, "GET", "/members", { userId: "dev-jo", login: "jo", role: "member" });
    expect(member.status).toBe(403);
    expect(member.body).toHaveProperty("fix");
  });

  it("records last seen on API use at most once per interval per user", async () => {
    forgetSeenThrottle();
    const user: UserProps = { userId: "dev-kim", login: "kim", role: "member" };
    const t0 = Date.UTC(2026, 10, 23, 12);
    await expect(recordSeen(env.DB, user, t0)).resolves.toBeUndefined();
    expect(recordSeen(env.DB, user, t0 + 1000)).toBeNull();
    await expect(recordSeen(env.DB, user, t0 + MEMBER_SEEN_INTERVAL_MS + 1)).resolves.toBeUndefined();
    const row = await env.DB.prepare("SELECT first_seen_at, last_seen_at FROM members WHERE user_id = 'dev-kim'").first();
    expect(row).toEqual({ first_seen_at: t0, last_seen_at: t0 + MEMBER_SEEN_INTERVAL_MS + 1 });
  });
});
