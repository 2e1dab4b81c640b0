import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import worker from "../../src/index";
import { describe, expect, it } from "vitest";
import { listVersions } from "../../src/catalog/catalog-store";
import { uniqueSkill } from "../support/catalog-test-data";
import { admin, adminAs } from "./admin-test-client";

// Not a loopback host: the dev user does not apply, so only a grant or the token gets in.
const PUBLIC = "https://slipsnisse.example.com/admin/api";
const TOKEN = "adm-test-7f3c9a1e";

describe("who may use the admin API", () => {
  it("answers 401 without a grant, token or loopback dev user", async () => {
    const response = await adminAs(new Request(`${PUBLIC}/skills`));
    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({ error: expect.stringContaining("ADMIN_TOKEN") });
  });

  it("accepts the ADMIN_TOKEN secret as a bearer token and refuses any other token", async () => {
    const good = await adminAs(new Request(`${PUBLIC}/skills`, { headers: { authorization: `Bearer ${TOKEN}` } }), { vars: { ADMIN_TOKEN: TOKEN } });
    expect(good.status).toBe(200);
    const bad = await adminAs(new Request(`${PUBLIC}/skills`, { headers: { authorization: `Bearer ${TOKEN}x` } }), { vars: { ADMIN_TOKEN: TOKEN } });
    expect(bad.status).toBe(401);
    expect(await bad.text()).not.toContain(TOKEN);
  });

  it("answers 403 to a signed-in member who is not an admin", async () => {
    const response = await adminAs(new Request(`${PUBLIC}/skills`), { props: { userId: "gh:2", login: "bob", role: "member" } });
    expect(response.status).toBe(403);
    expect(await response.json()).toMatchObject({ error: "User bob is not an admin of this tenant." });
  });

  it("records the signed-in admin's login as the author of a change", async () => {
    const skill = uniqueSkill("authored");
    const response = await adminAs(
      new Request(`${PUBLIC}/skills/${skill}?note=first%20cut`, {
        method: "PUT",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ description: "x" }),
      }),
      {
        props: { userId: "gh:1", login: "alice", role: "admin" },
      },
    );
    expect(response.status).toBe(201);
    expect(await listVersions(env.DB, skill)).toMatchObject([{ version: 1, author: "alice", note: "first cut", current: true }]);
  });

  it("counts the ADMIN_TOKEN as the same author with and without sign-in (AUTH=none on loopback)", async () => {
    const skill = uniqueSkill("token-author");
    const ctx = createExecutionContext();
    const request = new Request(`http://127.0.0.1:8787/admin/api/skills/${skill}`, {
      method: "PUT",
      headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify({ description: "x" }),
    });
    const response = await worker.fetch(request as Parameters<typeof worker.fetch>[0], { ...env, AUTH: "none", ADMIN_TOKEN: TOKEN } as Env, ctx);
    await waitOnExecutionContext(ctx);
    expect(response.status).toBe(201);
    expect(await listVersions(env.DB, skill)).toMatchObject([{ author: "admin-token" }]);
  });

  describe("GET /whoami", () => {
    it("names a signed-in admin's user id, login, role and identity provider", async () => {
      const vars = { AUTH: "oauth", ENVIRONMENT: "test", IDP: "dev", DEV_USER: "alice", ADMIN_USERS: "alice" };
      const response = await adminAs(new Request(`${PUBLIC}/whoami`), { props: { userId: "dev-alice", login: "alice", role: "admin", idp: "dev" }, vars });
      expect(await response.json()).toEqual({ userId: "dev-alice", login: "alice", role: "admin", idp: "dev" });
    });

    it("matches a grant's admin role against today's ADMIN_USERS, by the names the provider vouches for", async () => {
      const vars = { AUTH: "oauth", ENVIRONMENT: "test", IDP: "dev", DEV_USER: "alice", ADMIN_USERS: "carol" };
      const demoted = await adminAs(new Request(`${PUBLIC}/whoami`), { props: { userId: "dev-alice", login: "alice", role: "admin", idp: "dev" }, vars });
      expect(demoted.status).toBe(403);
      // An OIDC grant from before the fix, made admin by its preferred_username.
      const oidc = {
        IDP: "oidc",
        OIDC_ISSUER: "https://idp.example.org",
        OIDC_CLIENT_ID: "slipsnisse",
        ALLOWED_GROUPS: "eng",
        ADMIN_USERS: "boss@example.com",
      };
      const props = { userId: "oidc-kc-mallory", login: "boss@example.com", email: "mallory@example.com", role: "admin" as const, idp: "oidc" as const };
      expect((await adminAs(new Request(`${PUBLIC}/whoami`), { props, vars: { AUTH: "oauth", ENVIRONMENT: "test", ...oidc } })).status).toBe(403);
    });

    it("names the ADMIN_TOKEN caller and the loopback dev user of --no-auth", async () => {
      const token = await adminAs(new Request(`${PUBLIC}/whoami`, { headers: { authorization: `Bearer ${TOKEN}` } }), { vars: { ADMIN_TOKEN: TOKEN } });
      expect(await token.json()).toEqual({ userId: "admin-token", login: "admin-token", role: "admin", idp: null });
      expect(await admin("GET", "/whoami")).toMatchObject({ status: 200, body: { userId: "local:dev", login: "dev", role: "admin", idp: null } });
    });
  });
});
