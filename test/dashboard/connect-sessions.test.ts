import type { OAuthHelpers } from "@cloudflare/workers-oauth-provider";
import { env } from "cloudflare:test";
import { afterEach, describe, expect, it, onTestFinished, vi } from "vitest";
import { removeMember, restoreMember } from "../../src/auth/member-removals";
import { connectionsStub } from "../../src/downstream/connections/connection-target";
import { UserConnections } from "../../src/downstream/connections/user-connections";
import { uniqueSkill } from "../support/catalog-test-data";
import { storeConnection } from "../support/workers/stored-connection";
import { csrfIn, dashboardFetch, form, oauthVars, signInAs } from "./dashboard-test-client";

/**
 * Issue 34: the connect pages read the dashboard cookie through the same check as /admin
 * (signedInSession): a signed-out cookie, a revoked admin's and an admin taken off ADMIN_USERS
 * keep no team powers there, though the cookie's signature and 8 hours still hold; a removed
 * member's cookie (refused there before this issue) stays refused.
 */
const vars = { ...oauthVars, DEV_USERS: "alice,bob,carol", ADMIN_USERS: "alice,carol", ADMIN_TOKEN: "connect-sessions-admin-token-0123456789" };
/** The same team with carol taken off ADMIN_USERS. */
const demoted = { ...vars, ADMIN_USERS: "alice" };

const FLOW = "f".repeat(32);
const toSignIn = (response: Response) => response.status === 302 && (response.headers.get("location") ?? "").startsWith("/admin/login");

/** A team connection to a URL of this test's own, stored as a finished sign-in leaves it. */
async function teamConnection(): Promise<string> {
  const skill = uniqueSkill("conn-stale");
  const url = `https://crm-${skill}.example/mcp`;
  await storeConnection(
    { kind: "team" },
    { serverId: "crm", skill, url, connection: "team" },
    { access_token: "acc-team-stale-cookie", token_type: "Bearer" },
    { client: { client_id: "cid-stale" }, connectedBy: "alice" },
  );
  return url;
}

/** carol's cookie with the CSRF token her Connections page gave while she was an admin. */
async function carolWithForm(): Promise<{ cookie: string; csrf: string }> {
  const cookie = await signInAs("carol", vars);
  const page = await dashboardFetch("/connect", { headers: { cookie } }, vars);
  expect(page.status).toBe(200);
  const text = await page.text();
  expect(text).toContain("Team connections");
  return { cookie, csrf: csrfIn(text) };
}

/** carol holds no grant here; the removal's own mark is what the pages must honour. */
const noGrants = { listUserGrants: async () => ({ items: [] }), revokeGrant: async () => {} } as unknown as OAuthHelpers;

const endings: Array<{ name: string; end(cookie: string, csrf: string): Promise<void>; vars: Record<string, string>; undo?(): Promise<void> }> = [
  {
    name: "signed out",
    vars,
    async end(cookie) {
      const admin = await dashboardFetch("/admin", { headers: { cookie } }, vars);
      const out = await dashboardFetch("/admin/logout", form({ csrf: csrfIn(await admin.text()) }, cookie), vars);
      expect(out.status).toBe(303);
    },
  },
  {
    name: "revoked by an admin",
    vars,
    async end() {
      const revoke = await dashboardFetch(
        "/admin/api/members/dev-carol/revoke",
        { method: "POST", headers: { Authorization: `Bearer ${vars.ADMIN_TOKEN}` } },
        vars,
      );
      expect(revoke.status).toBe(200);
    },
  },
  { name: "taken off ADMIN_USERS", vars: demoted, async end() {} },
  {
    name: "removed from the team",
    vars,
    async end() {
      await removeMember(env, noGrants, "dev-carol");
    },
    undo: () => restoreMember(env, "dev-carol"),
  },
];

afterEach(() => {
  vi.restoreAllMocks();
});

describe("the connect pages apply /admin's session checks (issue 34)", () => {
  for (const ending of endings) {
    it(`an admin's cookie ${ending.name} cannot open a team connect page, disconnect the team, or finish a team callback`, async () => {
      const url = await teamConnection();
      const { cookie, csrf } = await carolWithForm();
      await ending.end(cookie, csrf);
      onTestFinished(async () => {
        await ending.undo?.();
      });
      const finish = vi.spyOn(UserConnections.prototype, "finish");

      const page = await dashboardFetch(`/connect/team/${FLOW}`, { headers: { cookie } }, ending.vars);
      const disconnect = await dashboardFetch("/connect/disconnect", form({ csrf, owner: "team", server: url }, cookie), ending.vars);
      const callback = await dashboardFetch("/connect/callback?state=stolen-state-0123456789&code=attacker-code", { headers: { cookie } }, ending.vars);
      const list = await dashboardFetch("/connect", { headers: { cookie } }, ending.vars);

      expect(await connectionsStub(env, { kind: "team" }).status(url)).not.toBeNull();
      if (ending.vars === demoted) {
        // Still a member: her own connections stay hers, the team's are an admin's.
        expect(page.status).toBe(403);
        expect(await page.text()).toContain("<h1>Admins only</h1>");
        expect(disconnect.status).toBe(303);
        expect(callback.status).toBe(403);
        // Her own flows only: the team's object is never asked to redeem the code.
        expect(finish).toHaveBeenCalledTimes(1);
        expect(list.status).toBe(200);
        expect(await list.text()).not.toContain("Team connections");
      } else {
        for (const response of [page, callback, list]) expect(toSignIn(response), `${response.url} ${response.status}`).toBe(true);
        expect(disconnect.status).toBe(401);
        expect(finish).not.toHaveBeenCalled();
      }
    });
  }

  it("a live admin still opens the team's connect page and disconnects the team; a member never could", async () => {
    const url = await teamConnection();
    const { cookie, csrf } = await carolWithForm();
    const page = await dashboardFetch(`/connect/team/${FLOW}`, { headers: { cookie } }, vars);
    expect(page.status).toBe(404);
    expect(await page.text()).toContain("No such connect link");
    const bob = await signInAs("bob", vars);
    expect((await dashboardFetch(`/connect/team/${FLOW}`, { headers: { cookie: bob } }, vars)).status).toBe(403);
    const disconnect = await dashboardFetch("/connect/disconnect", form({ csrf, owner: "team", server: url }, cookie), vars);
    expect(disconnect.status).toBe(303);
    expect(await connectionsStub(env, { kind: "team" }).status(url)).toBeNull();
  });
});
