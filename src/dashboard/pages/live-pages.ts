import { Hono } from "hono";
import { html } from "hono/html";
import { readAuthConfig } from "../../auth/auth-config";
import type { LiveRun, LiveRunEnded, LiveWait } from "../../experts/live/live-events";
import {
  ENDED_TTL_MS,
  liveFeedStub,
  MAX_RECENT_ENDED,
  SOCKET_EXPIRES_HEADER,
  SOCKET_SESSION_HEADER,
  SOCKET_USER_HEADER,
} from "../../experts/live/live-run-feed";
import { log } from "../../observability/logger";
import { recentlyEndedRuns } from "../../admin/run-index-query";
import { dashboardMessage, formatTime, renderDashboardPage } from "../dashboard-layout";
import { rawElementText } from "../raw-element-text";
import { frameOf, type DashboardContext, type DashboardEnv } from "../dashboard-context";
import { onlySkill, skillFilterNotice, skillParam } from "../skill-filter";

/**
 * Live runs: the page draws the runs in flight from the tenant's live feed (a Durable Object,
 * src/experts/live/live-run-feed.ts) and then follows it over a WebSocket: runs appear when they
 * start, advance step by step, say what they wait on (counting the seconds in the page from when
 * the wait began) and move to "Finished" when they end. A fresh load lists the runs that ended
 * lately from the run index (the feed hears of runs only while a page watches) beside those the
 * feed kept. Without JavaScript the page shows what the feed held
 * when it was loaded, with a link to load it again.
 */
export function livePages(): Hono<DashboardEnv> {
  const routes = new Hono<DashboardEnv>();

  routes.get("/live", async (c) => {
    const skill = skillParam(c.req.query("skill"));
    const now = Date.now();
    const snapshot = await liveFeedStub(c.env)
      .snapshot(now)
      .catch((error: unknown) => {
        log("error", "live feed unreadable", { error: String(error) });
        return null;
      });
    const inFlight = onlySkill(snapshot?.runs ?? [], skill);
    const recent = onlySkill(recentlyEnded(snapshot?.recent ?? [], await indexedEnds(c.env.DB, now)), skill);
    const body = html`<h1>Live</h1>
${skillFilterNotice(skill, "/admin/live")}
<p>Runs in flight appear here as they start, with the step they are on and what they wait on; finished runs move below (the last ${MAX_RECENT_ENDED} of the last ${ENDED_TTL_MS / 60_000} minutes). <span id="live-state" role="status">${snapshot === null ? "The live feed did not answer." : "Loaded."}</span></p>
<noscript><p><a href="/admin/live${skill === undefined ? "" : `?skill=${skill}`}">Refresh</a> to see the runs in flight now (this page needs JavaScript to update by itself), or <a href="/admin/runs?since=1h${skill === undefined ? "" : `&skill=${skill}`}">show the last hour's runs</a>.</p></noscript>
<h2>In flight</h2>
<div class="table-wrap"><table aria-label="Runs in flight"><thead><tr><th scope="col">Started</th><th scope="col">Skill / expert</th><th scope="col">User</th><th scope="col">Step</th><th scope="col">Last step</th><th scope="col">Waiting on</th></tr></thead>
<tbody id="live-in-flight" data-skill="${skill ?? ""}" data-now="${now}">${inFlight.length === 0 ? emptyRow(6, IN_FLIGHT_EMPTY) : inFlight.map((run) => inFlightRow(run, now))}</tbody></table></div>
<h2>Finished</h2>
<div class="table-wrap"><table aria-label="Finished runs"><thead><tr><th scope="col">Ended</th><th scope="col">Skill / expert</th><th scope="col">User</th><th scope="col">Outcome</th><th scope="col">Steps</th><th scope="col">Tokens in / out</th><th scope="col">Tools</th><th scope="col">Latency</th></tr></thead>
<tbody id="live-runs">${recent.length === 0 ? emptyRow(8, FINISHED_EMPTY) : recent.map(endedRow)}</tbody></table></div>`;
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

/** What the empty tables say would appear in them (the script draws the same rows). */
const IN_FLIGHT_EMPTY =
  "No run in flight. A run appears here when someone calls an expert: its step, and what it waits on (the model, a tool, an approval, a connection) and for how long.";
const FINISHED_EMPTY = `No run ended in the last ${ENDED_TTL_MS / 60_000} minutes. Runs appear here as they end, with their outcome, tokens, tools and latency, and link to their trace.`;

function emptyRow(columns: number, text: string) {
  return html`<tr class="empty"><td class="muted" colspan="${columns}">${text}</td></tr>`;
}

function inFlightRow(run: LiveRun, now: number) {
  return html`<tr data-run="${run.runId}"><td>${formatTime(run.startedAt)}</td><td>${run.skill} / ${run.expert}</td><td>${run.user.login}</td><td>${stepText(run)}</td><td>${run.activity}</td><td>${waitCell(run.waiting, now)}</td></tr>`;
}

function waitCell(waiting: LiveWait | undefined, now: number) {
  if (waiting === undefined) return html`<span class="muted">working</span>`;
  return html`${waitText(waiting)} <span class="muted" data-since="${waiting.since}">${forText(now - waiting.since)}</span>`;
}

/** Kept in step with the script's copy below. */
function waitText(waiting: LiveWait): string {
  switch (waiting.on) {
    case "model":
      return "waiting on model";
    case "tool":
      return `waiting on ${waiting.name ?? "a tool"}`;
    case "approval":
      return `waiting on an approval${waiting.name === undefined ? "" : ` of ${waiting.name}`}`;
    case "question":
      return "waiting on the user's answer";
    case "server":
      return `connecting to ${waiting.name ?? "a server"}`;
  }
}

function forText(ms: number): string {
  const seconds = Math.max(0, Math.floor(ms / 1000));
  return seconds < 60 ? `for ${seconds} s` : `for ${Math.floor(seconds / 60)} min ${seconds % 60} s`;
}

/**
 * The feed's recent ends (those it heard while a page watched) and the run index's (every run,
 * about a second after it ends), one row a run, newest first.
 */
function recentlyEnded(fromFeed: readonly EndedRow[], fromIndex: readonly EndedRow[]): EndedRow[] {
  const byRun = new Map<string, EndedRow>();
  for (const run of [...fromFeed, ...fromIndex]) if (!byRun.has(run.runId)) byRun.set(run.runId, run);
  return [...byRun.values()].sort((a, b) => b.at - a.at).slice(0, MAX_RECENT_ENDED);
}

async function indexedEnds(db: D1Database, now: number): Promise<EndedRow[]> {
  const runs = await recentlyEndedRuns(db, now - ENDED_TTL_MS, MAX_RECENT_ENDED).catch((error: unknown) => {
    log("error", "run index unreadable for the live page", { error: String(error) });
    return [];
  });
  return runs.map(({ run, tools }) => ({
    runId: run.run_id,
    at: run.ended_at,
    skill: run.skill,
    expert: run.expert,
    user: { id: run.user_id, login: run.user_login ?? "" },
    outcome: run.outcome,
    steps: run.steps,
    toolCalls: run.tool_calls,
    inputTokens: run.input_tokens,
    outputTokens: run.output_tokens,
    elapsedMs: run.elapsed_ms,
    tools,
  }));
}

/** A finished run's row: a feed end, or an index row (whose outcome may also be "interrupted"). */
type EndedRow = Omit<LiveRunEnded, "type" | "outcome"> & { outcome: string };

function endedRow(run: EndedRow) {
  const tools = run.tools.map((tool) => `${tool.name} ${tool.status}`).join(", ") || "none";
  return html`<tr data-run="${run.runId}" data-at="${run.at}"><td><a href="/admin/runs/${encodeURIComponent(run.runId)}" aria-label="Run ${run.runId}">${formatTime(run.at)}</a></td><td>${run.skill} / ${run.expert}</td><td>${run.user.login || run.user.id}</td><td class="${outcomeClass(run.outcome)}">${run.outcome}</td><td>${run.steps}</td><td>${run.inputTokens} / ${run.outputTokens}</td><td>${tools}</td><td>${run.elapsedMs} ms</td></tr>`;
}

function outcomeClass(outcome: string): string {
  return outcome === "ok" ? "ok" : outcome === "error" ? "bad" : "warn";
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
// The server's clock, as this page last heard it: durations count from the server's timestamps.
let skew = Date.now() - Number(inFlight.dataset.now || Date.now());
const time = (ms) => new Date(ms).toISOString().replace("T", " ").slice(0, 19) + " UTC";
const stepText = (run) => run.step === 0 ? "starting (of " + run.maxSteps + ")" : "step " + run.step + " of " + run.maxSteps;
const cell = (text) => { const td = document.createElement("td"); td.textContent = text; return td; };
const forText = (ms) => { const s = Math.max(0, Math.floor(ms / 1000)); return s < 60 ? "for " + s + " s" : "for " + Math.floor(s / 60) + " min " + (s % 60) + " s"; };
function waitText(w) {
  if (w.on === "model") return "waiting on model";
  if (w.on === "tool") return "waiting on " + (w.name || "a tool");
  if (w.on === "approval") return "waiting on an approval" + (w.name ? " of " + w.name : "");
  if (w.on === "question") return "waiting on the user's answer";
  return "connecting to " + (w.name || "a server");
}
function waitCell(waiting) {
  const td = document.createElement("td");
  const since = document.createElement("span");
  since.className = "muted";
  if (!waiting) { since.textContent = "working"; td.append(since); return td; }
  since.dataset.since = String(waiting.since);
  since.textContent = forText(Date.now() - skew - waiting.since);
  td.append(waitText(waiting) + " ", since);
  return td;
}
function tick() {
  for (const span of document.querySelectorAll("[data-since]")) span.textContent = forText(Date.now() - skew - Number(span.dataset.since));
}
setInterval(tick, 1000);
function emptyState(body, columns, text) {
  const rows = body.querySelectorAll("tr[data-run]").length;
  const empty = body.querySelector("tr.empty");
  if (rows > 0) { empty?.remove(); return; }
  if (empty) return;
  const row = document.createElement("tr");
  row.className = "empty";
  const td = cell(text);
  td.className = "muted";
  td.colSpan = columns;
  row.append(td);
  body.append(row);
}
const IN_FLIGHT_EMPTY = ${JSON.stringify(IN_FLIGHT_EMPTY)};
const FINISHED_EMPTY = ${JSON.stringify(FINISHED_EMPTY)};
function rowOf(body, runId) {
  for (const row of body.rows) if (row.dataset.run === runId) return row;
  return undefined;
}
function drawInFlight(run) {
  if (!shown(run.skill)) return;
  const row = rowOf(inFlight, run.runId) || document.createElement("tr");
  row.dataset.run = run.runId;
  row.replaceChildren(cell(time(run.startedAt)), cell(run.skill + " / " + run.expert), cell(run.user.login || run.user.id), cell(stepText(run)), cell(run.activity), waitCell(run.waiting));
  if (!row.parentNode) inFlight.append(row);
  emptyState(inFlight, 6, IN_FLIGHT_EMPTY);
}
function drawStep(event) {
  const row = rowOf(inFlight, event.runId);
  if (!row || row.cells.length < 6) return;
  row.cells[3].textContent = stepText(event);
  row.cells[4].textContent = event.activity;
}
function drawWaiting(event) {
  const row = rowOf(inFlight, event.runId);
  if (!row || row.cells.length < 6) return;
  row.cells[5].replaceWith(waitCell(event.waiting));
}
function drawEnded(event) {
  rowOf(inFlight, event.runId)?.remove();
  emptyState(inFlight, 6, IN_FLIGHT_EMPTY);
  if (!shown(event.skill) || rowOf(finished, event.runId)) return;
  const row = document.createElement("tr");
  row.dataset.run = event.runId;
  row.dataset.at = String(event.at);
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
  // Newest first, also when a snapshot brings ends this page missed while reconnecting.
  const later = [...finished.querySelectorAll("tr[data-run]")].find((other) => Number(other.dataset.at) < event.at);
  finished.insertBefore(row, later || null);
  while (finished.querySelectorAll("tr[data-run]").length > 200) finished.querySelector("tr[data-run]:last-of-type")?.remove();
  emptyState(finished, 8, FINISHED_EMPTY);
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
    if (event.type === "snapshot") {
      skew = Date.now() - event.at;
      inFlight.replaceChildren();
      event.runs.forEach(drawInFlight);
      emptyState(inFlight, 6, IN_FLIGHT_EMPTY);
      event.recent.slice().reverse().forEach(drawEnded);
    }
    else if (event.type === "run-started") drawInFlight(event.run);
    else if (event.type === "run-step") drawStep(event);
    else if (event.type === "run-waiting") drawWaiting(event);
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
