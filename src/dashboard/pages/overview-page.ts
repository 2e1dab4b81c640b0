import { html } from "hono/html";
import { getSkill, listSkills } from "../../catalog/catalog-store";
import { listPendingToolChanges } from "../../downstream/tool-change-review";
import { formatMs, formatTime, renderDashboardPage } from "../dashboard-layout";
import { frameOf, type DashboardContext } from "../dashboard-context";
import { overviewStats, serverUsage } from "../run-stats";
import { onlySkill, skillFilterNotice, skillParam } from "../skill-filter";
import { barChart } from "../svg-chart";
import { breakable } from "../breakable-name";
import { formatCost } from "./run-pages";
import type { UsageGroup } from "../../admin/usage/run-usage";
import { OUTCOMES } from "../../admin/run-index-query";
import type { RecordedOutcome } from "../../experts/core/run-types";

/**
 * The first page: runs, errors, tokens and cost today and this week, busiest experts, failing
 * servers, and what waits for an admin; with `?skill=` (where `/s/<skill>/admin` leads), one skill's.
 */
export async function overviewPage(c: DashboardContext): Promise<Response> {
  const skill = skillParam(c.req.query("skill"));
  const [allSummaries, stats, servers] = await Promise.all([
    listSkills(c.env.DB),
    overviewStats(c.env.DB, skill === undefined ? {} : { skill }),
    serverUsage(c.env.DB),
  ]);
  const summaries = onlySkill(allSummaries, skill);
  const skills = (await Promise.all(summaries.map((summary) => getSkill(c.env.DB, summary.name)))).filter((skill) => skill !== null);
  const pending = (await Promise.all(summaries.map((summary) => listPendingToolChanges(c.env.DB, summary.name)))).flat();
  const experts = skills.reduce((sum, skill) => sum + skill.config.experts.length, 0);
  const { week: weekTotals, today: todayTotals, days } = stats;
  const busiest = stats.experts.slice(0, 5);
  const failing = onlySkill(servers.servers, skill)
    .filter((server) => server.lastDay.errors > 0)
    .sort((a, b) => b.lastHour.errors - a.lastHour.errors || b.lastDay.errors - a.lastDay.errors);
  const lastChange = summaries.reduce((latest, summary) => Math.max(latest, summary.updatedAt), 0);
  const runsOf = skill === undefined ? "" : `&skill=${skill}`;
  const body = html`<h1>Overview${skill === undefined ? "" : html`: ${skill}`}</h1>
${skillFilterNotice(skill, "/admin")}
<h2>Today <span class="muted">(UTC)</span></h2>${usageCards(todayTotals, runsOf)}
<h2>Last 7 days</h2>${usageCards(weekTotals, runsOf)}
<div class="side">
${barChart(
  "Runs per day",
  days.map(({ day, group }) => ({ label: day.slice(5), value: group?.runs ?? 0 })),
  " runs",
)}
${barChart(
  "p50 latency per day (ms)",
  days.map(({ day, group }) => ({ label: day.slice(5), value: group?.latencyMs.p50 ?? 0 })),
  " ms",
)}
</div>
<div class="side"><section aria-labelledby="busiest"><h2 id="busiest">Busiest experts (7 days)</h2>
${
  busiest.length === 0
    ? html`<p class="muted">No runs yet.</p>`
    : html`<table><thead><tr><th scope="col">Expert</th><th scope="col">Runs</th><th scope="col">Errors</th><th scope="col">Budget stops</th><th scope="col">Cancels</th><th scope="col">Pauses</th><th scope="col">p50</th></tr></thead><tbody>
${busiest.map((group) => html`<tr><td><a href="/admin/runs?skill=${group.skill ?? ""}&amp;expert=${group.expert ?? ""}">${group.skill} / <code class="name">${breakable(group.expert ?? "")}</code></a></td><td>${group.runs}</td>${OUTCOME_COLUMNS.map((outcomes) => outcomeCell(group, outcomes))}<td>${formatMs(group.latencyMs.p50)}</td></tr>`)}
</tbody></table>`
}</section>
<section aria-labelledby="failing"><h2 id="failing">Failing servers (24 h)</h2>
${
  failing.length === 0
    ? html`<p class="ok">No downstream errors in the last 24 hours.</p>`
    : html`<table><thead><tr><th scope="col">Server</th><th scope="col">Errors 1 h / 24 h</th><th scope="col">Last error</th></tr></thead><tbody>
${failing.map((server) => html`<tr><td>${server.skill} / <code>${server.server}</code></td><td class="bad">${server.lastHour.errors} / ${server.lastDay.errors}</td><td>${server.lastDay.lastError?.message ?? ""}</td></tr>`)}
</tbody></table>`
}</section></div>
<h2>Catalog</h2>
<div class="cards">
<div class="card"><div class="n">${skills.length}</div><div class="l"><a href="/admin/skills">skills</a>, ${experts} experts</div></div>
<div class="card"><div class="n${pending.length > 0 ? " warn" : ""}">${pending.length}</div><div class="l"><a href="/admin/servers">tool changes to review</a></div></div>
</div>
${lastChange > 0 ? html`<p class="muted">Catalog last changed ${formatTime(lastChange)}. <a href="/admin/catalog">History</a></p>` : html`<p class="muted">No catalog loaded yet.</p>`}`;
  return renderDashboardPage({ title: "Overview", current: "overview", ...frameOf(c) }, body);
}

/** The busiest experts' outcome columns: errors (a restart's `interrupted` is one), budget stops, cancels, pauses. */
const OUTCOME_COLUMNS = [["error", "interrupted"], ["budget_exhausted"], ["cancelled"], ["paused"]] as const;

function outcomeCell(group: UsageGroup, outcomes: readonly RecordedOutcome[]) {
  const count = outcomes.reduce((sum, outcome) => sum + (group.outcomes[outcome] ?? 0), 0);
  if (count === 0) return html`<td class="muted">0</td>`;
  const [first] = outcomes;
  // A pause waits for a person (an approval, an answer): its own neutral category, not a failure.
  const tone = first === "error" ? "bad" : first === "paused" ? "paused" : "warn";
  // The run list filters by the outcomes it knows; a pause is listed under no filter of its own.
  if (!OUTCOMES.some((known) => known === first)) return html`<td class="${tone}">${count}</td>`;
  return html`<td><a class="${tone}" href="/admin/runs?skill=${group.skill ?? ""}&amp;expert=${group.expert ?? ""}&amp;outcome=${first ?? ""}">${count}</a></td>`;
}

/** Runs that did not end well: everything but ok and paused (a pause waits for a person; it is counted on its own). */
function errorsOf(group: UsageGroup | undefined): number {
  return group ? group.runs - (group.outcomes.ok ?? 0) - pausesOf(group) : 0;
}

function pausesOf(group: UsageGroup | undefined): number {
  return group?.outcomes.paused ?? 0;
}

function usageCards(group: UsageGroup | undefined, runsOf: string) {
  return html`<div class="cards">
<div class="card"><div class="n">${group?.runs ?? 0}</div><div class="l"><a href="/admin/runs?since=7d${runsOf}">runs</a></div></div>
<div class="card"><div class="n${errorsOf(group) > 0 ? " bad" : ""}">${errorsOf(group)}</div><div class="l"><a href="/admin/runs?outcome=error${runsOf}">not ok</a></div></div>
<div class="card pauses"><div class="n">${pausesOf(group)}</div><div class="l"><a href="/admin/runs?outcome=paused${runsOf}">paused</a>, waiting for a person</div></div>
<div class="card"><div class="n">${(group?.inputTokens ?? 0) + (group?.outputTokens ?? 0)}</div><div class="l">tokens (${group?.inputTokens ?? 0} in, ${group?.outputTokens ?? 0} out)</div></div>
<div class="card"><div class="n">${formatCost(group?.cost ?? null)}</div><div class="l">cost${group && group.unpricedRuns > 0 ? ` (${group.unpricedRuns} runs unpriced)` : ""}</div></div>
<div class="card"><div class="n">${formatMs(group?.latencyMs.p50)}</div><div class="l">p50 latency (p95 ${formatMs(group?.latencyMs.p95)})</div></div>
</div>`;
}
