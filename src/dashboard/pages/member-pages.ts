import type { OAuthHelpers } from "@cloudflare/workers-oauth-provider";
import { Hono } from "hono";
import { html } from "hono/html";
import { findMember, listMembers } from "../../auth/member-directory";
import { revokeMember } from "../../admin/member-revocation";
import { dashboardMessage, formatTime, renderDashboardPage } from "../dashboard-layout";
import { type DashboardContext, type DashboardEnv, frameOf } from "../dashboard-context";
import { recentUsage } from "../run-stats";
import { formatCost } from "./run-pages";

/** The OAuth provider's helpers for this request's origin (src/index.ts hands them to the app). */
export type OAuthHelpersSource = (env: Env, origin: string) => OAuthHelpers;

/**
 * Members as sign-in saw them, their active grants and 7-day usage, and Revoke (every grant and
 * dashboard session at once): offered on every row but the admin's own, and done only from its
 * confirmation page.
 */
export function memberPages(oauthHelpers: OAuthHelpersSource | undefined): Hono<DashboardEnv> {
  const routes = new Hono<DashboardEnv>();

  routes.get("/members", async (c) => {
    const [members, usage] = await Promise.all([listMembers(c.env.DB, 200), recentUsage(c.env.DB, 7, ["user"])]);
    const oauth = helpersOrUndefined(c.env, c.req.url, oauthHelpers);
    const grants = await Promise.all(members.map(async (member) => (oauth ? (await oauth.listUserGrants(member.user_id)).items.length : null)));
    const revoked = c.req.query("revoked");
    const self = c.get("session").user.userId;
    const body = html`<h1>Members</h1>
${revoked ? html`<p class="notice" role="status">Revoked every grant and dashboard session of ${revoked}: their tokens and dashboard sign-ins stop working now, and their connections to downstream servers are removed.</p>` : ""}
${oauth ? "" : html`<p class="muted">Sign-in is off here (no OAuth grants to list or revoke).</p>`}
<p>Automation signs in as <a href="/admin/service-clients">service clients</a>, listed and revoked there.</p>
<div class="table-wrap"><table><thead><tr><th scope="col">Member</th><th scope="col">Role</th><th scope="col">Last seen</th><th scope="col">Runs (7 days)</th><th scope="col">Tokens</th><th scope="col">Cost</th><th scope="col">Active grants</th><th scope="col">Action</th></tr></thead><tbody>
${members.map((member, index) => {
  const used = usage.find((group) => group.user?.id === member.user_id);
  const count = grants[index];
  return html`<tr><td>${member.login}${member.email ? html`<br><span class="muted">${member.email}</span>` : ""}<br><code>${member.user_id}</code></td><td>${member.role}</td><td>${formatTime(member.last_seen_at)}</td>
<td><a href="/admin/runs?user=${encodeURIComponent(member.user_id)}">${used?.runs ?? 0}</a></td><td>${(used?.inputTokens ?? 0) + (used?.outputTokens ?? 0)}</td><td>${formatCost(used?.cost ?? null)}</td><td>${count ?? "—"}</td>
<td>${
    !oauth
      ? ""
      : member.user_id === self
        ? html`<span class="muted">You (sign out instead)</span>`
        : html`<a class="button danger" href="${revokePath(member.user_id)}" aria-label="Revoke ${member.login}…">Revoke…</a>`
  }</td></tr>`;
})}
</tbody></table></div>`;
    return renderDashboardPage({ title: "Members", current: "members", ...frameOf(c) }, body);
  });

  // The confirmation: a page of its own (no script needed), reached from the list's "Revoke…".
  routes.get("/members/:user/revoke", async (c) => {
    const target = await revocable(c);
    if (target instanceof Response) return target;
    const body = html`<h1>Revoke ${target.login}?</h1>
<p>This ends their tokens and dashboard sessions: every OAuth grant of <strong>${target.login}</strong> (<code>${target.userId}</code>) is revoked, their MCP clients and open dashboard pages stop working now, their connections to downstream servers are removed, and they must sign in again (if sign-in still lets them in).</p>
<form method="post" action="${revokePath(target.userId)}"><input type="hidden" name="csrf" value="${c.get("csrf")}"><input type="hidden" name="confirmed" value="yes">
<p class="actions"><button class="danger" type="submit" aria-label="Revoke every grant and dashboard session of ${target.login}">Revoke ${target.login}</button> <a href="/admin/members">Cancel</a></p></form>`;
    return renderDashboardPage({ title: `Revoke ${target.login}?`, current: "members", ...frameOf(c) }, body);
  });

  routes.post("/members/:user/revoke", async (c) => {
    const target = await revocable(c);
    if (target instanceof Response) return target;
    // Only the confirmation page's form says "confirmed": any other POST (an old page's form) is
    // shown the confirmation first.
    const form = await c.req.parseBody();
    if (form.confirmed !== "yes") return new Response(null, { status: 303, headers: { Location: revokePath(target.userId) } });
    await revokeMember(c.env, target.oauth, target.userId);
    return new Response(null, { status: 303, headers: { Location: `/admin/members?revoked=${encodeURIComponent(target.login)}` } });
  });

  /** Who `:user` names, when a revoke of them may go ahead; else the page that says why not. */
  async function revocable(c: DashboardContext): Promise<{ oauth: OAuthHelpers; userId: string; login: string } | Response> {
    const name = c.req.param("user") ?? "";
    const oauth = helpersOrUndefined(c.env, c.req.url, oauthHelpers);
    if (!oauth) return dashboardMessage(409, "Nothing to revoke", "Sign-in is off here, so there are no grants.", frameOf(c));
    const member = await findMember(c.env.DB, name);
    const userId = member?.user_id ?? name;
    if (userId === c.get("session").user.userId) {
      return dashboardMessage(409, "Not your own access", "You cannot revoke yourself here: sign out to end this session, or ask another admin.", frameOf(c));
    }
    return { oauth, userId, login: member?.login ?? userId };
  }

  return routes;
}

function revokePath(userId: string): string {
  return `/admin/members/${encodeURIComponent(userId)}/revoke`;
}

function helpersOrUndefined(env: Env, url: string, source: OAuthHelpersSource | undefined): OAuthHelpers | undefined {
  if (!source) return undefined;
  try {
    return source(env, new URL(url).origin);
  } catch {
    return undefined;
  }
}
