import { Hono } from "hono";
import { html } from "hono/html";
import { readAuthConfig } from "../../auth/auth-config";
import type { LiveRun } from "../../experts/live/live-events";
import { liveFeedStub, SOCKET_EXPIRES_HEADER, SOCKET_SESSION_HEADER, SOCKET_USER_HEADER } from "../../experts/live/live-run-feed";
import { log } from "../../observability/logger";
import { dashboardMessage, formatTime, renderDashboardPage } from "../dashboard-layout";
import { rawElementText } from "../raw-element-text";
import { frameOf, type DashboardContext, type DashboardEnv } from "../dashboard-routes";
import { onlySkill, skillFilterNotice, skillParam } from "../skill-filter";

/**
 * Live runs: the page draws the runs in flight from the tenant's live feed (a Durable Object,
 * src/experts/live/live-run-feed.ts) and then follows it over a WebSocket: runs appear when they
 * start, advance step by step and move to "Finished" when they end. Without JavaScript the page
 * shows the runs in flight when it was loaded, with a link to load it again.
 */
export function livePages(): Hono<DashboardEnv> {
  const routes = new Hono<DashboardEnv>();

  routes.get("/live", async (c) => {
    const skill = skillParam(c.req.query("skill"));
    const runs = await liveFeedStub(c.env)
      .inFlight()
      .catch((error: unknown) => {
        log("error", "live feed unreadable", { error: String(error) });
        return null;
      });
    const body = html`<h1>Live</h1>
${skillFilterNotice(skill, "/admin/live")}
<p>Runs in flight appear here as they start and advance step by step; finished runs move below. <span id="live-state" role="status">${runs === null ? "The live feed did not answer." : "Loaded."}</span></p>
<noscript><p><a href="/admin/live${skill === undefined ? "" : `?skill=${skill}`}">Refresh</a> to see the runs in flight now (this page needs JavaScript to update by itself), or <a href="/admin/runs?since=1h${skill === undefined ? "" : `&skill=${skill}`}">show the last hour's runs</a>.</p></noscript>
<h2>In flight</h2>
<div class="table-wrap"><table aria-label="Runs in flight"><thead><tr><th scope="col">Started</th><th scope="col">Skill / expert</th><th scope="col">User</th><th scope="col">Step</th><th scope="col">Doing</th></tr></thead>
<tbody id="live-in-flight" data-skill="${skill ?? ""}">${onlySkill(runs ?? [], skill).map(inFlightRow)}</tbody></table></div>
<h2>Finished</h2>
<div class="table-wrap"><table aria-label="Finished runs"><thead><tr><th scope="col">Ended</th><th scope="col">Skill / expert</th><th scope="col">User</th><th scope="col">Outcome</th><th scope="col">Steps</th><th scope="col">Tokens in / out</th><th scope="col">Tools</th><th scope="col">Latency</th></tr></thead>
<tbody id="live-runs"></tbody></table></div>`;
    return renderDashboardPage({ title: "Live", current: "live", ...frameOf(c) }, body, 200, {}, LIVE_SCRIPT);
  });

  // The session cookie was checked by requireDashboardAdmin. A WebSocket handshake is not
  // subject to CORS, SameSite=Lax still sends the cookie from any page of the same site (a
  // sibling subdomain), and under --no-auth the loopback admin needs no cookie at all: so the
  // Origin must be the dashboard's own (cross-site WebSocket hijacking).
  routes.get("/live/socket", async (c) => {
    if (c.req.header("upgrade")?.toLowerCase() !== "websocket") return new Response("Expected a WebSocket upgrade.", { status: 426 });
    const origin = c.req.header("origin");
    if (origin === undefined || origin !== dashboardOrigin(c)) {
      return dashboardMessage(403, "Not this site", "The live feed only answers the dashboard's own pages.", frameOf(c));
    }
    const session = c.get("session");
    const headers = new Headers({
      upgrade: "websocket",
      [SOCKET_EXPIRES_HEADER]: String(session.exp * 1000),
      [SOCKET_SESSION_HEADER]: session.sid,
      [SOCKET_USER_HEADER]: session.user.userId,
    });
    return liveFeedStub(c.env).fetch("https://live-feed/socket", { headers });
  });

  return routes;
}

/** PUBLIC_URL when set (the origin behind a proxy), else the origin the request came to. */
function dashboardOrigin(c: DashboardContext): string {
  let publicUrl: string | undefined;
  try {
    publicUrl = readAuthConfig(c.env).PUBLIC_URL;
  } catch {
    publicUrl = undefined;
  }
  return new URL(publicUrl ?? c.req.url).origin;
}

function inFlightRow(run: LiveRun) {
  return html`<tr data-run="${run.runId}"><td>${formatTime(run.startedAt)}</td><td>${run.skill} / ${run.expert}</td><td>${run.user.login}</td><td>${stepText(run)}</td><td>${run.activity}</td></tr>`;
}

function stepText(run: Pick<LiveRun, "step" | "maxSteps">): string {
  return run.step === 0 ? `starting (of ${run.maxSteps})` : `step ${run.step} of ${run.maxSteps}`;
}

/**
 * Builds rows with textContent only, so nothing a run carries is ever parsed as markup. The
 * socket reconnects with backoff (and at once when the feed asks for a fresh sign-in check; not
 * after a sign-out or revoke, which the feed reports with 4003); a
 * "ping" every 30 s keeps idle proxies from closing it and is answered without waking the feed.
 */
const LIVE_SCRIPT = rawElementText(
  "script",
  `
const inFlight = document.getElementById("live-in-flight");
const finished = document.getElementById("live-runs");
const state = document.getElementById("live-state");
const only = inFlight.dataset.skill;
const shown = (skill) => !only || skill === only;
const time = (ms) => new Date(ms).toISOString().replace("T", " ").slice(0, 19) + " UTC";
const stepText = (run) => run.step === 0 ? "starting (of " + run.maxSteps + ")" : "step " + run.step + " of " + run.maxSteps;
const cell = (text) => { const td = document.createElement("td"); td.textContent = text; return td; };
function rowOf(runId) {
  for (const row of inFlight.rows) if (row.dataset.run === runId) return row;
  return undefined;
}
function drawInFlight(run) {
  if (!shown(run.skill)) return;
  const row = rowOf(run.runId) || document.createElement("tr");
  row.dataset.run = run.runId;
  row.replaceChildren(cell(time(run.startedAt)), cell(run.skill + " / " + run.expert), cell(run.user.login || run.user.id), cell(stepText(run)), cell(run.activity));
  if (!row.parentNode) inFlight.append(row);
}
function drawStep(event) {
  const row = rowOf(event.runId);
  if (!row || row.cells.length < 5) return;
  row.cells[3].textContent = stepText(event);
  row.cells[4].textContent = event.activity;
}
function drawEnded(event) {
  rowOf(event.runId)?.remove();
  if (!shown(event.skill)) return;
  const row = document.createElement("tr");
  const first = document.createElement("td");
  const link = document.createElement("a");
  link.href = "/admin/runs/" + encodeURIComponent(event.runId);
  link.textContent = time(event.at);
  link.setAttribute("aria-label", "Run " + event.runId);
  first.append(link);
  const outcome = cell(event.outcome);
  outcome.className = event.outcome === "ok" ? "ok" : event.outcome === "error" ? "bad" : "warn";
  const tools = event.tools.map((tool) => tool.name + " " + tool.status).join(", ") || "none";
  row.append(first, cell(event.skill + " / " + event.expert), cell(event.user.login || event.user.id), outcome, cell(String(event.steps)), cell(event.inputTokens + " / " + event.outputTokens), cell(tools), cell(event.elapsedMs + " ms"));
  finished.prepend(row);
  while (finished.rows.length > 200) finished.lastElementChild.remove();
}
let attempt = 0;
function connect() {
  const socket = new WebSocket((location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/admin/live/socket");
  let ping;
  socket.onopen = () => { attempt = 0; state.textContent = "Connected."; ping = setInterval(() => { if (socket.readyState === 1) socket.send("ping"); }, 30000); };
  socket.onmessage = (message) => {
    if (message.data === "pong") return;
    let event;
    try { event = JSON.parse(message.data); } catch { return; }
    if (event.type === "snapshot") { inFlight.replaceChildren(); event.runs.forEach(drawInFlight); }
    else if (event.type === "run-started") drawInFlight(event.run);
    else if (event.type === "run-step") drawStep(event);
    else if (event.type === "run-ended") drawEnded(event);
  };
  socket.onclose = (closed) => {
    clearInterval(ping);
    // 4003: this session was signed out or revoked on the server; reconnecting would be refused.
    if (closed.code === 4003) { state.textContent = "Signed out. Reload the page to sign in again."; return; }
    attempt = closed.code === 4001 ? 0 : Math.min(attempt + 1, 6);
    state.textContent = attempt > 3 ? "Disconnected; retrying (reload the page, or sign in again, if this lasts)." : "Reconnecting…";
    setTimeout(connect, closed.code === 4001 ? 0 : 500 * 2 ** attempt);
  };
}
connect();
`,
);
