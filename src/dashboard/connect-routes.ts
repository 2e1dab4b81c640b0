import { Hono } from "hono";
import { html } from "hono/html";
import type { UserProps } from "../auth/user-props";
import { clientMetadataDocument, connectionsStub, type ConnectionOwner } from "../downstream/connections/connection-target";
import type { ConnectFlowView, ConnectionSummary } from "../downstream/connections/connection-schema";
import { dashboardMessage, formatTime, renderDashboardPage } from "./dashboard-layout";
import { LOGIN_PATH } from "./dashboard-login";
import { csrfToken, csrfTokenMatches, type DashboardSession, signedInSession } from "./dashboard-session";

/**
 * The connect pages on Slipsnisse's own origin (README "Connections"): `/connect/<flow>` shows
 * which server asks for what access and sends the member on to the server's sign-in;
 * `/connect/callback` is where that sign-in returns. Both need the browser's dashboard session
 * (members may hold one; they are sent to sign in first), and both look only in the signed-in
 * member's own UserConnections object (or, for an admin, the team's). So a link or callback
 * minted for alice does nothing in bob's browser, and an attacker's callback cannot attach their
 * account to a victim's session: the flow is bound to the user, not to whoever holds the URL
 * (SEP-1036, security considerations).
 */
export function connectRoutes(): Hono<{ Bindings: Env }> {
  const app = new Hono<{ Bindings: Env }>();

  // Public: authorization servers fetch it to learn who the client id is (Client ID Metadata Documents).
  app.get("/client-metadata.json", (c) => {
    const origin = c.env.PUBLIC_URL.replace(/\/+$/, "") || new URL(c.req.url).origin;
    return c.json(clientMetadataDocument(origin), 200, { "Cache-Control": "public, max-age=3600" });
  });

  app.get("/callback", async (c) => {
    const user = await signedInUser(c.req.raw, c.env);
    if (!user) return signInFirst(c.req.url);
    const error = c.req.query("error");
    if (error !== undefined)
      return dashboardMessage(400, "Not connected", `The server's sign-in ended without access (${error.slice(0, 100)}). Nothing was connected.`, frame(user));
    const state = c.req.query("state");
    const code = c.req.query("code");
    if (!state || !code) return dashboardMessage(400, "Not connected", "This address carries no sign-in result. Nothing was connected.", frame(user));
    const iss = c.req.query("iss");
    let answer = await connectionsStub(c.env, { kind: "user", userId: user.userId }).finish(state, code, iss, user.login);
    if ("refused" in answer && user.role === "admin") {
      const team = await connectionsStub(c.env, { kind: "team" }).finish(state, code, iss, user.login);
      if (!("refused" in team) || !team.refused.startsWith("this sign-in was not started")) answer = team;
    }
    if ("refused" in answer) {
      return dashboardMessage(
        403,
        "Not connected",
        `Nothing was connected: ${answer.refused}. Start again from the link your client showed, signed in as the member it was for.`,
        frame(user),
      );
    }
    return renderDashboardPage(
      { title: "Connected", ...frame(user) },
      html`<h1>Connected ${answer.serverId}</h1><p class="notice">Your account at <code>${answer.serverKey}</code> is connected for <strong>${user.login}</strong>. Go back to your client: call the expert again (the run waiting for this goes on).</p><p class="muted">You can end this connection any time from Connections.</p>`,
    );
  });

  // The member's Connections page: what they connected, and ending a connection.
  app.get("/", async (c) => {
    const signed = await signedIn(c.req.raw, c.env);
    if (!signed) return signInFirst(c.req.url);
    const { user, csrf, setCookie } = signed;
    const mine = await connectionsStub(c.env, { kind: "user", userId: user.userId }).list();
    const team = user.role === "admin" ? await connectionsStub(c.env, { kind: "team" }).list() : [];
    const ended = c.req.query("ended");
    const row = (connection: ConnectionSummary, owner: "user" | "team") =>
      html`<tr><td><strong>${connection.serverId}</strong><br><code>${connection.serverKey}</code></td><td>${connection.scope ?? "—"}</td><td>${formatTime(connection.connectedAt)}${owner === "team" ? html`<br><span class="muted">by ${connection.connectedBy}</span>` : ""}</td><td>${connection.expiresAt === null ? "—" : formatTime(connection.expiresAt)}</td>
<td><form class="inline" method="post" action="/connect/disconnect"><input type="hidden" name="csrf" value="${csrf}"><input type="hidden" name="owner" value="${owner}"><input type="hidden" name="server" value="${connection.serverKey}"><button type="submit" aria-label="Disconnect ${connection.serverId}">Disconnect</button></form></td></tr>`;
    const table = (rows: ConnectionSummary[], owner: "user" | "team") =>
      rows.length === 0
        ? html`<p class="muted">None.</p>`
        : html`<div class="table-wrap"><table><thead><tr><th scope="col">Server</th><th scope="col">Scopes</th><th scope="col">Connected</th><th scope="col">Token expires</th><th scope="col">Action</th></tr></thead><tbody>${rows.map((connection) => row(connection, owner))}</tbody></table></div>`;
    const body = html`<h1>Connections</h1>
${ended ? html`<p class="notice" role="status">Disconnected ${ended}: its token is forgotten here; the next call asks you to connect again.</p>` : ""}
<p>Servers your experts reach as you, with your own account there. Slipsnisse keeps each token encrypted and sends it only to its server.</p>
${table(mine, "user")}
${user.role === "admin" ? html`<h2>Team connections</h2><p>Every member's expert calls act as these accounts.</p>${table(team, "team")}` : ""}`;
    return renderDashboardPage({ title: "Connections", ...frame(user) }, body, 200, setCookie ? { "Set-Cookie": setCookie } : {});
  });

  app.post("/disconnect", async (c) => {
    const signed = await signedIn(c.req.raw, c.env);
    if (!signed) return dashboardMessage(401, "Sign in first", "Sign in, then disconnect from your Connections page.");
    const form = await c.req.parseBody().catch(() => ({}) as Record<string, unknown>);
    if (!(await csrfTokenMatches(c.env, signed.session, typeof form.csrf === "string" ? form.csrf : undefined)))
      return dashboardMessage(403, "Form expired", "Reload the Connections page and try again.", frame(signed.user));
    const owner: ConnectionOwner = form.owner === "team" && signed.user.role === "admin" ? { kind: "team" } : { kind: "user", userId: signed.user.userId };
    const server = typeof form.server === "string" && URL.canParse(form.server) ? form.server : undefined;
    if (server === undefined) return dashboardMessage(400, "Nothing to disconnect", "The form named no server.", frame(signed.user));
    await connectionsStub(c.env, owner).remove(server);
    return new Response(null, { status: 303, headers: { Location: `/connect?ended=${encodeURIComponent(new URL(server).host)}` } });
  });

  const show = (owner: "user" | "team") => async (c: { req: { raw: Request; url: string; param(name: string): string | undefined }; env: Env }) => {
    const user = await signedInUser(c.req.raw, c.env);
    if (!user) return signInFirst(c.req.url);
    if (owner === "team" && user.role !== "admin")
      return dashboardMessage(403, "Admins only", "A team connection is made by an admin: every member then acts as the account connected here.", frame(user));
    const flowId = c.req.param("flow") ?? "";
    const who: ConnectionOwner = owner === "team" ? { kind: "team" } : { kind: "user", userId: user.userId };
    const flow = /^[A-Za-z0-9_-]{20,100}$/.test(flowId) ? await connectionsStub(c.env, who).flow(flowId) : null;
    if (!flow)
      return dashboardMessage(
        404,
        "No such connect link",
        `This link is not for ${user.login}, or it expired. Nothing was connected. If it was yours, call the expert again for a new link.`,
        frame(user),
      );
    return connectPage(flow, user, owner);
  };
  app.get("/team/:flow", show("team"));
  app.get("/:flow", show("user"));
  return app;
}

function connectPage(flow: ConnectFlowView, user: UserProps, owner: "user" | "team"): Promise<Response> {
  if (flow.completedAt !== null)
    return dashboardMessage(
      200,
      "Already connected",
      `${flow.serverId} was connected with this link. Go back to your client and call the expert again.`,
      frame(user),
    );
  const access =
    flow.scopes.length > 0
      ? html`<ul>${flow.scopes.map((scope) => html`<li><code>${scope}</code></li>`)}</ul>`
      : html`<p>What the server grants by default (no scopes named).</p>`;
  const as =
    owner === "team"
      ? html`the team's account: <strong>every member's expert calls will act as the account you connect</strong>`
      : html`your account, for <strong>${user.login}</strong> only`;
  // A link, not a form: the next hop is another origin, and `form-action 'self'` would block the redirect there.
  return renderDashboardPage(
    { title: `Connect ${flow.serverId}`, ...frame(user) },
    html`<h1>Connect ${flow.serverId}</h1>
<p>An expert of skill <code>${flow.skill}</code> needs to reach <code>${flow.url}</code> as ${as}.</p>
<h2>Access asked</h2>${access}
<p>You sign in at <code>${flow.authorizationOrigin}</code>; Slipsnisse keeps the token it gets encrypted, sends it only to <code>${flow.url}</code>, and you can end the connection any time.</p>
<p><a id="connect" href="${flow.authorizationUrl}">Continue to ${flow.authorizationOrigin}</a></p>
<p class="muted">This link works until ${formatTime(flow.expiresAt)}.</p>`,
    200,
    { "Cache-Control": "no-store", "Referrer-Policy": "no-referrer" },
  );
}

/**
 * The signed-in member with this session's CSRF token, through the same check as the admin pages
 * (signedInSession): a signed-out, revoked or removed member's cookie opens nothing here, and the
 * team's powers follow today's ADMIN_USERS, not the role in the cookie.
 */
async function signedIn(request: Request, env: Env): Promise<{ user: UserProps; session: DashboardSession; csrf: string; setCookie?: string } | undefined> {
  // Fails closed: a session that cannot be checked (a KV or key failure) is none.
  const signed = await signedInSession(request, env).catch(() => undefined);
  if (!signed) return undefined;
  return {
    user: signed.session.user,
    session: signed.session,
    csrf: await csrfToken(env, signed.session),
    ...(signed.setCookie ? { setCookie: signed.setCookie } : {}),
  };
}

async function signedInUser(request: Request, env: Env): Promise<UserProps | undefined> {
  return (await signedInSession(request, env).catch(() => undefined))?.session.user;
}

function signInFirst(url: string): Response {
  const { pathname, search } = new URL(url);
  return new Response(null, {
    status: 302,
    headers: { Location: `${LOGIN_PATH}?next=${encodeURIComponent(`${pathname}${search}`)}`, "Cache-Control": "no-store" },
  });
}

/** Member-facing pages: the header names Slipsnisse, not its admin dashboard. */
function frame(user: UserProps): { login: string; nav: false; audience: "member" } {
  return { login: user.login, nav: false, audience: "member" };
}
