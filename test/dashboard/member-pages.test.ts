import { describe, expect, it } from "vitest";
import { csrfIn, dashboardFetch, form, oauthVars, signInAs } from "./dashboard-test-client";

/** Two admins (alice, carol) and a member (bob). */
const vars = { ...oauthVars, DEV_USERS: "alice,bob,carol", ADMIN_USERS: "alice,carol" };

/** The members table's row of `login` (its markup). */
function rowOf(page: string, login: string): string {
  const rows = page.split("<tr>").slice(1);
  const row = rows.find((markup) => markup.startsWith(`<td>${login}`));
  if (!row) throw new Error(`no row of ${login}`);
  return row.slice(0, row.indexOf("</tr>"));
}

describe("members page: revoke (issue 22)", () => {
  it("offers Revoke, styled as dangerous, on every row but the admin's own, and revokes only from its confirmation page", async () => {
    const alice = await signInAs("alice", vars);
    const carol = await signInAs("carol", vars);
    const list = await dashboardFetch("/admin/members", { headers: { cookie: alice } }, vars);
    expect(list.status).toBe(200);
    const page = await list.text();
    expect(rowOf(page, "alice")).not.toContain("/revoke");
    expect(rowOf(page, "alice")).toContain("You (sign out instead)");
    // A link to the confirmation, not a form that revokes at once.
    expect(rowOf(page, "carol")).toContain('<a class="button danger" href="/admin/members/dev-carol/revoke" aria-label="Revoke carol…">Revoke…</a>');
    expect(page).not.toMatch(/<form[^>]*revoke/);

    const confirm = await dashboardFetch("/admin/members/dev-carol/revoke", { headers: { cookie: alice } }, vars);
    expect(confirm.status).toBe(200);
    const confirmation = await confirm.text();
    expect(confirmation).toContain("<h1>Revoke carol?</h1>");
    expect(confirmation).toContain("This ends their tokens and dashboard sessions");
    expect(confirmation).toContain('<form method="post" action="/admin/members/dev-carol/revoke">');
    expect(confirmation).toContain('<input type="hidden" name="confirmed" value="yes">');
    expect(confirmation).toContain('<button class="danger" type="submit" aria-label="Revoke every grant and dashboard session of carol">Revoke carol</button>');
    expect(confirmation).toContain('<a href="/admin/members">Cancel</a>');
    expect(confirm.headers.get("content-security-policy")).not.toContain("script-src");

    // A POST that did not come from the confirmation (an old page's form) is shown it first.
    const csrf = csrfIn(confirmation);
    const unconfirmed = await dashboardFetch("/admin/members/dev-carol/revoke", form({ csrf }, alice), vars);
    expect(unconfirmed.status).toBe(303);
    expect(unconfirmed.headers.get("location")).toBe("/admin/members/dev-carol/revoke");
    expect((await dashboardFetch("/admin", { headers: { cookie: carol } }, vars)).status).toBe(200);

    const revoked = await dashboardFetch("/admin/members/dev-carol/revoke", form({ csrf, confirmed: "yes" }, alice), vars);
    expect(revoked.status).toBe(303);
    expect(revoked.headers.get("location")).toBe("/admin/members?revoked=carol");
    expect((await dashboardFetch("/admin", { headers: { cookie: carol } }, vars)).status).toBe(302);
  });

  it("refuses to revoke the admin's own access, by id or by login, and the admin stays signed in", async () => {
    const alice = await signInAs("alice", vars);
    const list = await (await dashboardFetch("/admin/members", { headers: { cookie: alice } }, vars)).text();
    for (const name of ["dev-alice", "alice"]) {
      const confirm = await dashboardFetch(`/admin/members/${name}/revoke`, { headers: { cookie: alice } }, vars);
      expect(confirm.status).toBe(409);
      await expect(confirm.text()).resolves.toContain("Not your own access");
      const post = await dashboardFetch(`/admin/members/${name}/revoke`, form({ csrf: csrfIn(list), confirmed: "yes" }, alice), vars);
      expect(post.status).toBe(409);
    }
    expect((await dashboardFetch("/admin", { headers: { cookie: alice } }, vars)).status).toBe(200);
  });
});
