import { Hono } from "hono";
import { html } from "hono/html";
import { z } from "zod";
import { SERVER_ID_PATTERN, SKILL_NAME_PATTERN } from "../../catalog/catalog-schema";
import { authServer, authServers, memberConnections, removeConnections, teamConnections, type AuthServer } from "../../admin/connection-overview";
import type { ConnectionSummary } from "../../downstream/connections/connection-schema";
import { CONNECT_CALLBACK_PATH, CONNECT_PATH, connectionsStub } from "../../downstream/connections/connection-target";
import { dashboardMessage, formatTime, renderDashboardPage } from "../dashboard-layout";
import { frameOf, type DashboardContext, type DashboardEnv } from "../dashboard-context";

const connectForm = z.object({ skill: z.string().regex(SKILL_NAME_PATTERN), server: z.string().regex(SERVER_ID_PATTERN) });
const disconnectForm = z.object({
  server: z
    .string()
    .max(2_000)
    .refine((value) => URL.canParse(value)),
});

/**
 * The admin's view of connections (README "Connections"): per catalog server with `auth`,
 * whether each member connects their own account or the team shares one; for a team connection,
 * who connected it and when (every member acts as that account), with Connect and Disconnect;
 * for a per-member server, how many members connected. Summaries only: no token is ever read here.
 */
export function connectionPages(): Hono<DashboardEnv> {
  const routes = new Hono<DashboardEnv>();

  routes.get("/connections", connectionsPage);

  // Starts the team's sign-in to one server (discovery and registration happen now) and sends
  // the admin to the same connect page a run's link opens. A POST with the session's form token
  // (requireDashboardAdmin), so no other site can start one.
  routes.post("/connections/team/connect", async (c) => {
    const form = connectForm.safeParse(await c.req.parseBody());
    if (!form.success) return dashboardMessage(400, "Cannot connect", "The form named no server; reload the Connections page and try again.", frameOf(c));
    const server = await authServer(c.env.DB, form.data.skill, form.data.server);
    if (server === undefined || server.target.connection !== "team")
      return dashboardMessage(
        404,
        "No such team connection",
        `${form.data.skill} has no server ${form.data.server} with a team connection (auth.connection "team").`,
        frameOf(c),
      );
    const origin = c.env.PUBLIC_URL.replace(/\/+$/, "") || new URL(c.req.url).origin;
    const answer = await connectionsStub(c.env, { kind: "team" }).startFlow(server.target, `${origin}${CONNECT_CALLBACK_PATH}`, c.get("session").user.login);
    if ("failed" in answer)
      return dashboardMessage(502, `Cannot connect ${server.serverId}`, `${server.serverId} cannot be connected: ${answer.failed}.`, frameOf(c));
    return new Response(null, { status: 303, headers: { Location: `${CONNECT_PATH}/team/${answer.flowId}` } });
  });

  routes.post("/connections/team/disconnect", async (c) => {
    const form = disconnectForm.safeParse(await c.req.parseBody());
    if (!form.success)
      return dashboardMessage(400, "Nothing to disconnect", "The form named no server; reload the Connections page and try again.", frameOf(c));
    const removed = await removeConnections(c.env, { kind: "team" }, form.data.server);
    const host = new URL(form.data.server).host;
    return new Response(null, { status: 303, headers: { Location: `/admin/connections?${removed > 0 ? "ended" : "gone"}=${encodeURIComponent(host)}` } });
  });

  return routes;
}

async function connectionsPage(c: DashboardContext): Promise<Response> {
  const [servers, team, members] = await Promise.all([authServers(c.env.DB), teamConnections(c.env), memberConnections(c.env)]);
  const csrf = c.get("csrf");
  const ended = c.req.query("ended");
  const gone = c.req.query("gone");
  const teamServers = servers.filter((server) => server.target.connection === "team");
  const userServers = servers.filter((server) => server.target.connection === "user");
  const connectedCount = (server: AuthServer) => members.filter((member) => member.connections.some((row) => row.serverKey === server.serverKey)).length;

  const teamRow = (server: AuthServer) => {
    const connection = team.find((row) => row.serverKey === server.serverKey);
    const machine = server.target.grant === "client_credentials";
    return html`<tr><td><strong>${server.serverId}</strong> <span class="muted">in ${server.skill}</span><br><code>${server.serverKey}</code></td>
<td>${
      machine
        ? machineAccount(connection)
        : connection === undefined
          ? html`<span class="warn">Not connected</span><br><span class="muted">Members' calls to it pause until an admin connects it.</span>`
          : teamAccount(connection)
    }</td>
<td>${connection?.scope ?? "—"}</td>
<td>${
      machine && connection === undefined
        ? html`<span class="muted">No sign-in needed</span>`
        : connection === undefined
          ? html`<form class="inline" method="post" action="/admin/connections/team/connect"><input type="hidden" name="csrf" value="${csrf}"><input type="hidden" name="skill" value="${server.skill}"><input type="hidden" name="server" value="${server.serverId}"><button type="submit" aria-label="Connect ${server.serverId} for the team">Connect…</button></form>`
          : html`<form class="inline" method="post" action="/admin/connections/team/disconnect"><input type="hidden" name="csrf" value="${csrf}"><input type="hidden" name="server" value="${server.serverKey}"><button class="danger" type="submit" aria-label="Disconnect ${server.serverId} for the team">Disconnect</button></form>`
    }</td></tr>`;
  };

  const userRow = (server: AuthServer) => {
    const count = connectedCount(server);
    return html`<tr><td><strong>${server.serverId}</strong> <span class="muted">in ${server.skill}</span><br><code>${server.serverKey}</code></td>
<td>${count} ${count === 1 ? "member" : "members"} connected</td><td>${server.target.scopes?.join(" ") ?? html`<span class="muted">the server's default</span>`}</td></tr>`;
  };

  const head = (...columns: string[]) => html`<thead><tr>${columns.map((column) => html`<th scope="col">${column}</th>`)}</tr></thead>`;
  const body = html`<h1>Connections</h1>
${ended ? html`<p class="notice" role="status">Disconnected the team's account at ${ended}: its token is forgotten; members' calls to it ask an admin to connect again.</p>` : ""}
${gone ? html`<p class="notice" role="status">The team had no connection at ${gone}.</p>` : ""}
<p>Downstream servers that sign each caller in with OAuth (<code>auth</code> in the catalog). Slipsnisse keeps their tokens encrypted; none is shown here.</p>
<section aria-labelledby="team-connections"><h2 id="team-connections">Team connections</h2>
<p>One account for the whole team: <strong>every member's expert calls act as the account an admin connected</strong>. The downstream sees that account, not who asked.</p>
${
  teamServers.length === 0
    ? html`<p class="muted">No server uses a team connection.</p>`
    : html`<div class="table-wrap"><table>${head("Server", "Acting as", "Scopes", "Action")}<tbody>${teamServers.map(teamRow)}</tbody></table></div>`
}</section>
<section aria-labelledby="member-connections"><h2 id="member-connections">Per-member connections</h2>
<p>Each member connects their own account; their calls act as them. Members connect and disconnect on their own <a href="/connect">Connections page</a>; revoking a member removes theirs.</p>
${
  userServers.length === 0
    ? html`<p class="muted">No server uses per-member connections.</p>`
    : html`<div class="table-wrap"><table>${head("Server", "Members", "Scopes asked")}<tbody>${userServers.map(userRow)}</tbody></table></div>`
}</section>`;
  return renderDashboardPage({ title: "Connections", current: "connections", ...frameOf(c) }, body);
}

/**
 * Which account a team connection acts as, as far as Slipsnisse knows: the account the admin
 * named below signed in with at the server (the server's own name for it is not told to clients).
 */
function teamAccount(connection: ConnectionSummary) {
  return html`<span class="ok">Connected</span>: every member acts as the account <strong>${connection.connectedBy}</strong> signed in with, since ${formatTime(connection.connectedAt)}${
    connection.expiresAt === null
      ? ""
      : html`<br><span class="muted">its token expires ${formatTime(connection.expiresAt)}${connection.refreshedAt === null ? "" : html` (last refreshed ${formatTime(connection.refreshedAt)})`}</span>`
  }`;
}

/** A team server with `grant: "client_credentials"`: the client's own account, no one signed in. */
function machineAccount(connection: ConnectionSummary | undefined) {
  const what = html`every member acts as the OAuth client itself (its id is the Worker secret named in <code>client_id_secret</code>); Slipsnisse fetches its token with the client's credentials, no one signs in`;
  return connection === undefined
    ? html`<span class="muted">No token yet</span>: ${what}. The next call fetches one.`
    : html`<span class="ok">Client credentials</span>: ${what}. Token fetched ${formatTime(connection.refreshedAt ?? connection.connectedAt)}${
        connection.expiresAt === null ? "" : html`, expires ${formatTime(connection.expiresAt)}`
      }.`;
}
