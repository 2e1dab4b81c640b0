import { Hono } from "hono";
import { html } from "hono/html";
import { SKILL_NAME_PATTERN, TOOL_NAME_PATTERN } from "../../catalog/catalog-schema";
import { listEvalReports, type StoredModelResult } from "../../admin/evals/eval-reports";
import { getSkill, listSkills } from "../../catalog/catalog-store";
import { dashboardMessage, formatMs, formatTime, renderDashboardPage } from "../dashboard-layout";
import { frameOf, type DashboardEnv } from "../dashboard-context";

/**
 * An expert's evals: the latest results per model on the newest catalog version that has any,
 * and the history across catalog versions (what `npx slipsnisse eval` ran; src/admin/evals).
 */
export function evalPages(): Hono<DashboardEnv> {
  const routes = new Hono<DashboardEnv>();

  // Where the nav's Evals leads: every expert, how many evals its catalog gives it, and its results page.
  routes.get("/evals", async (c) => {
    const skills = (await Promise.all((await listSkills(c.env.DB)).map((summary) => getSkill(c.env.DB, summary.name)))).filter((skill) => skill !== null);
    const body = html`<h1>Evals</h1>
<p>Test questions an expert's catalog entry gives it (<code>evals</code>), with what a good run shows. Run them per model with <code>npx slipsnisse eval --skill &lt;skill&gt; --expert &lt;expert&gt;</code>; each expert's page shows the results and their history across catalog versions.</p>
${skills.length === 0 ? html`<p class="muted">No skills yet. Load a catalog with <code>slipsnisse push</code>.</p>` : ""}
${skills.map(
  (skill) => html`<section aria-labelledby="skill-${skill.name}"><h2 id="skill-${skill.name}">${skill.name}</h2>
${
  skill.config.experts.length === 0
    ? html`<p class="muted">No experts.</p>`
    : html`<div class="table-wrap"><table><thead><tr><th scope="col">Expert</th><th scope="col">Evals in the catalog</th><th scope="col">Results</th></tr></thead><tbody>
${skill.config.experts.map(
  (expert) =>
    html`<tr><td><code class="name">${expert.name}</code></td><td>${expert.evals?.length ?? 0}</td><td><a href="${evalsPath(skill.name, expert.name)}" aria-label="Evals of ${skill.name} / ${expert.name}">results and history</a></td></tr>`,
)}
</tbody></table></div>`
}</section>`,
)}`;
    return renderDashboardPage({ title: "Evals", current: "evals", ...frameOf(c) }, body);
  });

  routes.get("/catalog/:skill/experts/:expert/evals", async (c) => {
    const skill = c.req.param("skill");
    const expert = c.req.param("expert");
    if (!SKILL_NAME_PATTERN.test(skill) || !TOOL_NAME_PATTERN.test(expert))
      return dashboardMessage(404, "No such expert", "That skill or expert name is not valid.", frameOf(c));
    const reports = await listEvalReports(c.env, skill, expert);
    const [latest] = reports;
    const models = (report: (typeof reports)[number]) => Object.values(report.models).sort((a, b) => rate(b) - rate(a) || a.costUsd - b.costUsd);
    const body = html`<h1>Evals: ${skill} / <code>${expert}</code></h1>
${
  latest === undefined
    ? html`<p>No eval results yet. Run <code>npx slipsnisse eval --skill ${skill} --expert ${expert}</code>.</p>`
    : html`<section aria-labelledby="latest"><h2 id="latest">Latest, catalog version ${latest.catalogVersion}</h2>
<table><thead><tr><th>model</th><th>passed</th><th>tokens</th><th>cost</th><th>p50</th><th>p95</th><th>ran</th></tr></thead><tbody>
${models(latest).map(
  (
    model,
  ) => html`<tr><td><code>${model.model}</code></td><td>${model.passed}/${model.total}</td><td>${model.tokens}</td><td>${cost(model)}</td><td>${formatMs(model.p50Ms)}</td><td>${formatMs(model.p95Ms)}</td><td>${formatTime(model.ranAt)}</td></tr>
${model.failures.map(
  (failure) =>
    html`<tr class="failure"><td></td><td colspan="6">✗ ${failure.eval}: ${failure.reasons.join("; ")}${failure.runId ? html` (<a href="/admin/runs/${failure.runId}">trace</a>)` : ""}</td></tr>`,
)}`,
)}
</tbody></table></section>
<section aria-labelledby="history"><h2 id="history">History across catalog versions</h2>
<table><thead><tr><th>version</th><th>model</th><th>passed</th><th>cost</th><th>p50</th></tr></thead><tbody>
${reports.flatMap((report) =>
  models(report).map(
    (model) =>
      html`<tr><td>v${report.catalogVersion}</td><td><code>${model.model}</code></td><td>${model.passed}/${model.total}</td><td>${cost(model)}</td><td>${formatMs(model.p50Ms)}</td></tr>`,
  ),
)}
</tbody></table></section>`
}`;
    return renderDashboardPage({ title: `Evals: ${skill}/${expert}`, current: "evals", ...frameOf(c) }, body);
  });

  return routes;
}

/** An expert's eval results page. */
export function evalsPath(skill: string, expert: string): string {
  return `/admin/catalog/${skill}/experts/${expert}/evals`;
}

function rate(model: StoredModelResult): number {
  return model.total === 0 ? 0 : model.passed / model.total;
}

function cost(model: StoredModelResult): string {
  return model.unpriced ? "unpriced" : model.costUsd.toFixed(6);
}
