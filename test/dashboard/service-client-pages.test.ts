import { describe, expect, it } from "vitest";
import { skillConfig, uniqueSkill } from "../support/catalog-test-data";
import { csrfIn, dashboardFetch, form, oauthVars, signInAs } from "./dashboard-test-client";

/**
 * Issue 37: service clients beside the members in the dashboard: created from a form that shows
 * the secret once, listed without it, revoked only from a confirmation page, and the token
 * endpoint refuses it from then on. A member (not an admin) reaches none of it.
 */
const vars = { ...oauthVars, ADMIN_TOKEN: "service-client-pages-admin-token-0123456789" };

async function tokenFor(clientId: string, secret: string): Promise<number> {
  const response = await dashboardFetch(
    "/token",
    {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", authorization: `Basic ${btoa(`${clientId}:${secret}`)}` },
      body: new URLSearchParams({ grant_type: "client_credentials" }),
    },
    vars,
  );
  return response.status;
}

describe("service clients in the dashboard", () => {
  it("an admin creates one for a skill, sees its secret once, finds it listed beside members, and revokes it", async () => {
    const skill = uniqueSkill("svc-dash");
    const saved = await dashboardFetch(
      `/admin/api/skills/${skill}`,
      {
        method: "PUT",
        headers: { authorization: `Bearer ${vars.ADMIN_TOKEN}`, "content-type": "application/json" },
        body: JSON.stringify(skillConfig("dashboard")),
      },
      vars,
    );
    expect(saved.status).toBeLessThan(300);
    const alice = await signInAs("alice", vars);
    const members = await (await dashboardFetch("/admin/members", { headers: { cookie: alice } }, vars)).text();
    expect(members).toContain('<a href="/admin/service-clients">service clients</a>');
    const list = await dashboardFetch("/admin/service-clients", { headers: { cookie: alice } }, vars);
    expect(list.status).toBe(200);
    const csrf = csrfIn(await list.text());

    const unknownSkill = await dashboardFetch("/admin/service-clients", form({ csrf, name: "nightly", skills: "no-such-skill" }, alice), vars);
    expect(unknownSkill.status).toBe(400);

    const created = await dashboardFetch("/admin/service-clients", form({ csrf, name: "nightly", skills: skill }, alice), vars);
    expect(created.status).toBe(200);
    expect(created.headers.get("cache-control")).toBe("no-store");
    const page = await created.text();
    const clientId = /<dt>Client id<\/dt><dd><code>(svc-[^<]+)<\/code>/.exec(page)?.[1] ?? "";
    const secret = /<dt>Client secret<\/dt><dd><code>([^<]+)<\/code>/.exec(page)?.[1] ?? "";
    expect(clientId).not.toBe("");
    expect(await tokenFor(clientId, secret)).toBe(200);

    const listed = await (await dashboardFetch("/admin/service-clients", { headers: { cookie: alice } }, vars)).text();
    expect(listed).toContain(clientId);
    expect(listed).toContain(skill);
    expect(listed).not.toContain(secret);
    expect(listed).toContain(`href="/admin/service-clients/${clientId}/revoke"`);

    const confirm = await dashboardFetch(`/admin/service-clients/${clientId}/revoke`, { headers: { cookie: alice } }, vars);
    expect(await confirm.text()).toContain('<input type="hidden" name="confirmed" value="yes">');
    const unconfirmed = await dashboardFetch(`/admin/service-clients/${clientId}/revoke`, form({ csrf }, alice), vars);
    expect(unconfirmed.status).toBe(303);
    expect(await tokenFor(clientId, secret)).toBe(200);
    const revoked = await dashboardFetch(`/admin/service-clients/${clientId}/revoke`, form({ csrf, confirmed: "yes" }, alice), vars);
    expect(revoked.status).toBe(303);
    expect(revoked.headers.get("location")).toBe(`/admin/service-clients?revoked=${clientId}`);
    expect(await tokenFor(clientId, secret)).toBe(401);
  });

  it("a member who is not an admin reaches none of it, and a form without the session's token creates nothing", async () => {
    const bob = await signInAs("bob", vars);
    expect((await dashboardFetch("/admin/service-clients", { headers: { cookie: bob } }, vars)).status).toBe(403);
    const alice = await signInAs("alice", vars);
    const forged = await dashboardFetch("/admin/service-clients", form({ csrf: "forged", name: "sneaky", skills: "default" }, alice), vars);
    expect(forged.status).toBe(403);
    expect(await (await dashboardFetch("/admin/service-clients", { headers: { cookie: alice } }, vars)).text()).not.toContain("sneaky");
  });
});
