import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { listVersions, saveSkill } from "../../src/catalog/catalog-store";
import { skillConfig, uniqueSkill } from "../support/catalog-test-data";
import { csrfIn, dashboardFetch, form, oauthVars, signInAs } from "./dashboard-test-client";

async function skillWithTwoVersions(label: string): Promise<string> {
  const skill = uniqueSkill(label);
  await saveSkill(env.DB, skill, skillConfig("first"), { author: "seed" });
  await saveSkill(env.DB, skill, skillConfig("second"), { author: "seed" });
  return skill;
}

describe("dashboard sign-in", () => {
  it("sends a signed-out browser to the sign-in page, which offers the dev logins as links", async () => {
    const page = await dashboardFetch("/admin/skills");
    expect(page.status).toBe(302);
    expect(page.headers.get("location")).toBe("/admin/login");
    const login = await dashboardFetch("/admin/login");
    const text = await login.text();
    expect(text).toContain('href="/admin/login/start?login=alice"');
    expect(text).toContain('href="/admin/login/start?login=bob"');
  });

  it("signs an admin in through the dev identity provider with a __Host- session cookie (HttpOnly, Secure, SameSite=Lax)", async () => {
    const start = await dashboardFetch("/admin/login/start?login=alice");
    const callback = await dashboardFetch(new URL(start.headers.get("location") ?? "").pathname + new URL(start.headers.get("location") ?? "").search, {
      headers: {
        cookie: start.headers
          .getSetCookie()
          .map((line) => line.split(";")[0])
          .join("; "),
      },
    });
    const session = callback.headers.getSetCookie().find((line) => line.startsWith("__Host-slipsnisse-dashboard="));
    expect(session).toMatch(/; Path=\/; Max-Age=\d+; HttpOnly; Secure; SameSite=Lax$/);
    const cookie = await signInAs("alice");
    const overview = await dashboardFetch("/admin", { headers: { cookie } });
    expect(overview.status).toBe(200);
    expect(await overview.text()).toContain("Signed in as <strong>alice</strong>");
    expect(overview.headers.get("content-security-policy")).toMatch(
      /default-src 'none'; style-src 'nonce-[\w-]+';.*form-action 'self'; frame-ancestors 'none'/,
    );
  });

  it("refuses a callback whose state this browser did not start", async () => {
    const start = await dashboardFetch("/admin/login/start?login=alice");
    const cookie = start.headers
      .getSetCookie()
      .map((line) => line.split(";")[0])
      .join("; ");
    const forged = await dashboardFetch("/admin/login/callback?state=someone-elses-state-value-1234", { headers: { cookie } });
    expect(forged.status).toBe(400);
    expect(
      forged.headers.getSetCookie().some((line) => line.startsWith("__Host-slipsnisse-dashboard=") && !line.startsWith("__Host-slipsnisse-dashboard=;")),
    ).toBe(false);
  });

  it("ignores a session cookie whose signature does not match (a member promoting itself)", async () => {
    const cookie = await signInAs("bob");
    const [body = "", signature = ""] = cookie.slice("__Host-slipsnisse-dashboard=".length).split(".");
    const claims = JSON.parse(atob(body.replace(/-/g, "+").replace(/_/g, "/"))) as { user: { role: string } };
    claims.user.role = "admin";
    const forgedBody = btoa(JSON.stringify(claims)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
    const response = await dashboardFetch("/admin", { headers: { cookie: `__Host-slipsnisse-dashboard=${forgedBody}.${signature}` } });
    expect(response.status).toBe(302);
    expect(response.headers.get("location")).toBe("/admin/login");
  });

  it("names DASHBOARD_SESSION_KEY when no key can be had", async () => {
    const { DASHBOARD_SESSION_KEY: _unused, ...withoutKey } = oauthVars;
    const response = await dashboardFetch("/admin/login/start?login=alice", {}, { ...withoutKey, ADMIN_TOKEN: "" });
    expect(response.status).toBe(500);
    expect(await response.text()).toContain("DASHBOARD_SESSION_KEY");
  });

  it("lets the loopback admin in without signing in under --no-auth", async () => {
    const response = await dashboardFetch("/admin", {}, { AUTH: "none", ENVIRONMENT: "test" });
    expect(response.status).toBe(200);
    expect(await response.text()).toContain("Signed in as <strong>dev</strong>");
  });
});

describe("dashboard refusals", () => {
  it("shows a member who is not an admin a plain page saying so, on every page and POST", async () => {
    const skill = await skillWithTwoVersions("member-refused");
    const cookie = await signInAs("bob");
    for (const path of [
      "/admin",
      "/admin/runs",
      "/admin/live",
      "/admin/members",
      "/admin/skills",
      "/admin/servers",
      "/admin/catalog",
      `/admin/catalog/${skill}`,
    ]) {
      const response = await dashboardFetch(path, { headers: { cookie } });
      expect(response.status, path).toBe(403);
      expect(await response.text(), path).toContain("not an admin");
    }
    const post = await dashboardFetch(`/admin/catalog/${skill}/versions/1/restore`, form({ csrf: "anything" }, cookie));
    expect(post.status).toBe(403);
    expect(await listVersions(env.DB, skill)).toHaveLength(2);
  });

  it("lets a member sign out from the refusal page (to switch to an admin)", async () => {
    const cookie = await signInAs("bob");
    const refused = await (await dashboardFetch("/admin", { headers: { cookie } })).text();
    const out = await dashboardFetch("/admin/logout", form({ csrf: csrfIn(refused) }, cookie));
    expect(out.status).toBe(303);
    expect(out.headers.getSetCookie()).toContainEqual(expect.stringMatching(/^__Host-slipsnisse-dashboard=; Path=\/; Max-Age=0/));
  });

  it("takes the dashboard from an admin removed from ADMIN_USERS at the next request", async () => {
    const cookie = await signInAs("alice");
    expect((await dashboardFetch("/admin", { headers: { cookie } })).status).toBe(200);
    const demoted = await dashboardFetch("/admin", { headers: { cookie } }, { ...oauthVars, ADMIN_USERS: "carol" });
    expect(demoted.status).toBe(403);
  });

  it("refuses a POST from a signed-out browser", async () => {
    const skill = await skillWithTwoVersions("signed-out-post");
    const response = await dashboardFetch(`/admin/catalog/${skill}/versions/1/restore`, form({ csrf: "anything" }));
    expect(response.status).toBe(401);
    expect(await listVersions(env.DB, skill)).toHaveLength(2);
  });

  it("refuses an admin's POST without this session's CSRF token, and accepts it with the token", async () => {
    const skill = await skillWithTwoVersions("csrf");
    const cookie = await signInAs("alice");
    const missing = await dashboardFetch(`/admin/catalog/${skill}/versions/1/restore`, form({}, cookie));
    expect(missing.status).toBe(403);
    const otherSession = csrfIn(await (await dashboardFetch(`/admin/catalog/${skill}`, { headers: { cookie: await signInAs("alice") } })).text());
    const foreign = await dashboardFetch(`/admin/catalog/${skill}/versions/1/restore`, form({ csrf: otherSession }, cookie));
    expect(foreign.status).toBe(403);
    expect(await listVersions(env.DB, skill)).toHaveLength(2);

    const token = csrfIn(await (await dashboardFetch(`/admin/catalog/${skill}`, { headers: { cookie } })).text());
    const restored = await dashboardFetch(`/admin/catalog/${skill}/versions/1/restore`, form({ csrf: token }, cookie));
    expect(restored.status).toBe(303);
    expect(restored.headers.get("location")).toBe(`/admin/catalog/${skill}?restored=3`);
    expect(await listVersions(env.DB, skill)).toMatchObject([{ version: 3, author: "alice", current: true }, { version: 2 }, { version: 1 }]);
  });
});

describe("dashboard output", () => {
  it("escapes catalog text: a description with markup shows as text", async () => {
    const skill = uniqueSkill("escaped");
    await saveSkill(env.DB, skill, skillConfig(`<script>alert(1)</script>`), { author: "seed" });
    const page = await (await dashboardFetch("/admin/skills", {}, { AUTH: "none", ENVIRONMENT: "test" })).text();
    expect(page).toContain("&lt;script&gt;alert(1)&lt;/script&gt;");
    expect(page).not.toContain("<script>alert(1)");
  });
});

describe("members page", () => {
  it("lists who signed in to the dashboard, with role and last seen; a POST without the token revokes nothing", async () => {
    const cookie = await signInAs("alice");
    await signInAs("bob");
    const page = await dashboardFetch("/admin/members", { headers: { cookie } });
    expect(page.status).toBe(200);
    const text = await page.text();
    expect(text).toContain("<code>dev-alice</code>");
    expect(text).toContain("<code>dev-bob</code>");
    const refused = await dashboardFetch("/admin/members/dev-bob/revoke", form({}, cookie));
    expect(refused.status).toBe(403);
  });
});
