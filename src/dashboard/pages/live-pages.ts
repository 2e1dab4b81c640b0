import { Hono } from "hono";
import { html, raw } from "hono/html";
import { type RunIndexRecord, toRunSummary } from "../../admin/run-index-query";
import { D1_TABLES } from "../../storage-keys";
import { renderDashboardPage } from "../dashboard-layout";
import { frameOf, type DashboardEnv } from "../dashboard-routes";

const POLL_MS = 2_000;
/** One stream lives at most this long; EventSource reconnects by itself, resuming from Last-Event-ID. */
const STREAM_MS = 5 * 60_000;
const BATCH = 50;

/**
 * Live runs, first step: an SSE stream that polls the run index and sends each run as it
 * finishes. Runs still in flight are not shown (the index holds finished runs only). Without
 * JavaScript the page is a link to the runs list.
 */
export function livePages(): Hono<DashboardEnv> {
  const routes = new Hono<DashboardEnv>();

  routes.get("/live", (c) => {
    const body = html`<h1>Live</h1>
<p>Runs appear here as they finish (checked every ${POLL_MS / 1000} s). <span id="live-state" role="status">Connecting…</span></p>
<noscript><p><a href="/admin/runs?since=1h">Show the last hour's runs</a> (this page needs JavaScript to update by itself).</p></noscript>
<div class="table-wrap"><table><thead><tr><th scope="col">Ended</th><th scope="col">Skill / expert</th><th scope="col">User</th><th scope="col">Outcome</th><th scope="col">Steps</th><th scope="col">Latency</th></tr></thead>
<tbody id="live-runs"></tbody></table></div>`;
    return renderDashboardPage({ title: "Live", current: "live", ...frameOf(c) }, body, 200, {}, LIVE_SCRIPT);
  });

  routes.get("/live/events", (c) => {
    const resumeFrom = Number(c.req.header("last-event-id"));
    let since = Number.isSafeInteger(resumeFrom) && resumeFrom > 0 ? resumeFrom : Date.now();
    const db = c.env.DB;
    const encoder = new TextEncoder();
    const deadline = Date.now() + STREAM_MS;
    const stream = new ReadableStream<Uint8Array>({
      async pull(controller) {
        if (Date.now() > deadline) {
          controller.close();
          return;
        }
        const rows = await db
          .prepare(`SELECT * FROM ${D1_TABLES.runIndex} WHERE ended_at > ? ORDER BY ended_at, run_id LIMIT ?`)
          .bind(since, BATCH)
          .all<RunIndexRecord>();
        let chunk = "";
        for (const row of rows.results) {
          since = Math.max(since, row.ended_at);
          chunk += `id: ${row.ended_at}\nevent: run\ndata: ${JSON.stringify(toRunSummary(row))}\n\n`;
        }
        // A comment line also keeps proxies from closing an idle stream, and tells workerd whether the browser left.
        controller.enqueue(encoder.encode(chunk || ": waiting\n\n"));
        if (rows.results.length < BATCH) await new Promise((resolve) => setTimeout(resolve, POLL_MS));
      },
    });
    return new Response(stream, { headers: { "Content-Type": "text/event-stream", "Cache-Control": "no-store", "X-Accel-Buffering": "no" } });
  });

  return routes;
}

/** Builds rows with textContent only, so nothing a run carries is ever parsed as markup. */
const LIVE_SCRIPT = raw(`
const body = document.getElementById("live-runs");
const state = document.getElementById("live-state");
const source = new EventSource("/admin/live/events");
source.onopen = () => { state.textContent = "Connected."; };
source.onerror = () => { state.textContent = "Reconnecting…"; };
source.addEventListener("run", (event) => {
  const run = JSON.parse(event.data);
  const row = document.createElement("tr");
  const cells = [new Date(run.endedAt).toISOString().replace("T", " ").slice(0, 19) + " UTC", run.skill + " / " + run.expert, run.user.login || run.user.id, run.outcome, String(run.steps), run.elapsedMs + " ms"];
  cells.forEach((text, index) => {
    const cell = document.createElement("td");
    if (index === 0) {
      const link = document.createElement("a");
      link.href = "/admin/runs/" + encodeURIComponent(run.id);
      link.textContent = text;
      link.setAttribute("aria-label", "Run " + run.id);
      cell.append(link);
    } else cell.textContent = text;
    if (index === 3) cell.className = run.outcome === "ok" ? "ok" : run.outcome === "error" ? "bad" : "warn";
    row.append(cell);
  });
  body.prepend(row);
});
`);
