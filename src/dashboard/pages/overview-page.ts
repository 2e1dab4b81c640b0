import { html } from "hono/html";
import { getSkill, listSkills } from "../../catalog/catalog-store";
import { listPendingToolChanges } from "../../downstream/tool-change-review";
import { formatTime, renderDashboardPage } from "../dashboard-layout";
import { frameOf, type DashboardContext } from "../dashboard-routes";

/** The first page: what this server serves and what waits for an admin. */
export async function overviewPage(c: DashboardContext): Promise<Response> {
  const summaries = await listSkills(c.env.DB);
  const skills = (await Promise.all(summaries.map((summary) => getSkill(c.env.DB, summary.name)))).filter((skill) => skill !== null);
  const pending = (await Promise.all(summaries.map((summary) => listPendingToolChanges(c.env.DB, summary.name)))).flat();
  const experts = skills.reduce((sum, skill) => sum + skill.config.experts.length, 0);
  const servers = skills.reduce((sum, skill) => sum + Object.keys(skill.config.servers).length, 0);
  const lastChange = summaries.reduce((latest, summary) => Math.max(latest, summary.updatedAt), 0);
  const body = html`<h1>Overview</h1>
<div class="cards">
<div class="card"><div class="n">${skills.length}</div><div class="l">skills</div></div>
<div class="card"><div class="n">${experts}</div><div class="l">experts</div></div>
<div class="card"><div class="n">${servers}</div><div class="l">downstream servers</div></div>
<div class="card"><div class="n${pending.length > 0 ? " warn" : ""}">${pending.length}</div><div class="l"><a href="/admin/servers">tool changes to review</a></div></div>
</div>
${lastChange > 0 ? html`<p class="muted">Catalog last changed ${formatTime(lastChange)}. <a href="/admin/catalog">History</a></p>` : html`<p class="muted">No catalog loaded yet.</p>`}`;
  return renderDashboardPage({ title: "Overview", current: "overview", ...frameOf(c) }, body);
}
