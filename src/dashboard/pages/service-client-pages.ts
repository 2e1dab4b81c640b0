import { Hono } from "hono";
import { html } from "hono/html";
import { createServiceClient, listServiceClients, revokeServiceClient } from "../../auth/service-clients/service-client-store";
import { getSkill } from "../../catalog/catalog-store";
import { dashboardMessage, formatTime, renderDashboardPage } from "../dashboard-layout";
import { type DashboardEnv, frameOf } from "../dashboard-context";

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/**
 * Service clients (OAuth client credentials) beside the members: listed with their skills,
 * created from a form whose answer shows the secret once, revoked from a confirmation page, as
 * the admin API and CLI do (docs/operating.md#service-clients).
 */
export function serviceClientPages(): Hono<DashboardEnv> {
  const routes = new Hono<DashboardEnv>();

  routes.get("/service-clients", async (c) => {
    const clients = await listServiceClients(c.env.DB);
    const revoked = c.req.query("revoked");
    const body = html`<h1>Service clients</h1>
<p>Automation (a CI job, a bot) signs in with its own client id and secret (OAuth client credentials) and may use only the skills it was created for; its runs show it as the user. <a href="/admin/members">Members</a></p>
${revoked ? html`<p class="notice" role="status">Revoked ${revoked}: its tokens are refused from their next request.</p>` : ""}
<div class="table-wrap"><table><thead><tr><th scope="col">Service client</th><th scope="col">Skills</th><th scope="col">Created</th><th scope="col">Last token</th><th scope="col">Action</th></tr></thead><tbody>
${clients.map(
  (
    client,
  ) => html`<tr><td>${client.name}<br><code>${client.clientId}</code></td><td>${client.skills.join(", ")}</td><td>${formatTime(client.createdAt)} by ${client.createdBy}</td><td>${client.lastTokenAt === null ? "—" : formatTime(client.lastTokenAt)}</td>
<td>${client.revokedAt === null ? html`<a class="button danger" href="${revokePath(client.clientId)}" aria-label="Revoke ${client.name}…">Revoke…</a>` : html`<span class="muted">Revoked ${formatTime(client.revokedAt)}</span>`}</td></tr>`,
)}
</tbody></table></div>
<h2>New service client</h2>
<form method="post" action="/admin/service-clients"><input type="hidden" name="csrf" value="${c.get("csrf")}">
<p><label>Name <input name="name" required pattern="[A-Za-z0-9][A-Za-z0-9._-]{0,63}"></label></p>
<p><label>Skills (comma-separated) <input name="skills" required></label></p>
<p class="actions"><button type="submit">Create</button></p></form>`;
    return renderDashboardPage({ title: "Service clients", current: "members", ...frameOf(c) }, body);
  });

  routes.post("/service-clients", async (c) => {
    const form = await c.req.parseBody();
    const name = typeof form.name === "string" ? form.name.trim() : "";
    const skills = [
      ...new Set(
        (typeof form.skills === "string" ? form.skills : "")
          .split(",")
          .map((skill) => skill.trim())
          .filter((skill) => skill !== ""),
      ),
    ];
    if (!NAME.test(name)) return dashboardMessage(400, "Not possible", "A name is letters, digits, dot, dash or underscore (up to 64).", frameOf(c));
    if (skills.length === 0) return dashboardMessage(400, "Not possible", "Name at least one skill the client may use.", frameOf(c));
    for (const skill of skills) {
      if ((await getSkill(c.env.DB, skill)) === null) return dashboardMessage(400, "Not possible", `This tenant has no skill named "${skill}".`, frameOf(c));
    }
    const { client, secret } = await createServiceClient(c.env.DB, { name, skills, createdBy: c.get("session").user.login }, Date.now());
    const origin = new URL(c.req.url).origin;
    const body = html`<h1>Service client ${client.name} created</h1>
<p class="notice" role="status">Copy the secret now: it is shown this once and cannot be read again.</p>
<dl><dt>Client id</dt><dd><code>${client.clientId}</code></dd><dt>Client secret</dt><dd><code>${secret}</code></dd><dt>Token endpoint</dt><dd><code>${origin}/token</code> (grant_type=client_credentials)</dd><dt>Skills</dt><dd>${client.skills.join(", ")}</dd></dl>
<p><a href="/admin/service-clients">Back to service clients</a></p>`;
    const page = await renderDashboardPage({ title: `Service client ${client.name}`, current: "members", ...frameOf(c) }, body);
    page.headers.set("Cache-Control", "no-store");
    return page;
  });

  routes.get("/service-clients/:clientId/revoke", (c) => {
    const clientId = c.req.param("clientId");
    const body = html`<h1>Revoke ${clientId}?</h1>
<p>Its tokens are refused from their next request and it gets no new one. This cannot be undone; create a new client instead.</p>
<form method="post" action="${revokePath(clientId)}"><input type="hidden" name="csrf" value="${c.get("csrf")}"><input type="hidden" name="confirmed" value="yes">
<p class="actions"><button class="danger" type="submit">Revoke ${clientId}</button> <a href="/admin/service-clients">Cancel</a></p></form>`;
    return renderDashboardPage({ title: `Revoke ${clientId}?`, current: "members", ...frameOf(c) }, body);
  });

  routes.post("/service-clients/:clientId/revoke", async (c) => {
    const clientId = c.req.param("clientId");
    const form = await c.req.parseBody();
    if (form.confirmed !== "yes") return new Response(null, { status: 303, headers: { Location: revokePath(clientId) } });
    if (!(await revokeServiceClient(c.env.DB, clientId, Date.now())))
      return dashboardMessage(404, "No such service client", `This tenant has no service client "${clientId}".`, frameOf(c));
    return new Response(null, { status: 303, headers: { Location: `/admin/service-clients?revoked=${encodeURIComponent(clientId)}` } });
  });

  return routes;
}

function revokePath(clientId: string): string {
  return `/admin/service-clients/${encodeURIComponent(clientId)}/revoke`;
}
