import { Hono } from "hono";
import { html } from "hono/html";
import { z } from "zod";
import { restoreSkillVersion } from "../../catalog/catalog-service";
import { SKILL_NAME_PATTERN } from "../../catalog/catalog-schema";
import { getSkill, getVersion, listSkills, listVersions } from "../../catalog/catalog-store";
import { gateOnEvals } from "../../admin/evals/eval-gate";
import { EvalGateFailedError } from "../../admin/evals/eval-errors";
import { dashboardMessage, formatTime, renderDashboardPage } from "../dashboard-layout";
import { frameOf, type DashboardContext, type DashboardEnv } from "../dashboard-context";
import { lineDiff } from "../line-diff";

const versionNumber = z.coerce.number().int().min(1).max(Number.MAX_SAFE_INTEGER);

/** Catalog history per skill: every version, a readable diff between any two, and Restore. */
export function catalogPages(): Hono<DashboardEnv> {
  const routes = new Hono<DashboardEnv>();

  routes.get("/catalog", async (c) => {
    const skills = await listSkills(c.env.DB);
    const body = html`<h1>Catalog</h1>
${
  skills.length === 0
    ? html`<p class="muted">No skills yet. Load a catalog with <code>slipsnisse push</code>.</p>`
    : html`<div class="table-wrap"><table><thead><tr><th scope="col">Skill</th><th scope="col">Current version</th><th scope="col">Changed</th><th scope="col">Evals</th></tr></thead><tbody>
${skills.map((skill) => html`<tr><td><a href="/admin/catalog/${skill.name}">${skill.name}</a></td><td>v${skill.version}</td><td>${formatTime(skill.updatedAt)}</td><td><a href="/admin/evals#skill-${skill.name}" aria-label="Evals of ${skill.name}">evals</a></td></tr>`)}
</tbody></table></div>`
}`;
    return renderDashboardPage({ title: "Catalog", current: "catalog", ...frameOf(c) }, body);
  });

  routes.get("/catalog/:skill", async (c) => {
    const skill = c.req.param("skill");
    if (!SKILL_NAME_PATTERN.test(skill)) return dashboardMessage(404, "No such skill", `There is no skill "${skill.slice(0, 80)}".`, frameOf(c));
    const versions = await listVersions(c.env.DB, skill);
    if (versions.length === 0) return dashboardMessage(404, "No such skill", `There is no skill "${skill}".`, frameOf(c));
    const current = versions.find((v) => v.current)?.version ?? versions[0]?.version ?? 1;
    const to = versionNumber.safeParse(c.req.query("to")).data ?? current;
    const previous = versions.filter((v) => v.version < to).map((v) => v.version);
    const from = versionNumber.safeParse(c.req.query("from")).data ?? (previous.length > 0 ? Math.max(...previous) : to);
    const restored = versionNumber.safeParse(c.req.query("restored")).data;
    const body = html`<h1>Catalog: ${skill}</h1>
<p><a href="/admin/evals#skill-${skill}">Evals of ${skill}'s experts</a>: their results per model and catalog version.</p>
${restored === undefined ? "" : html`<p class="notice" role="status">Restored: v${restored} is now current (a copy of an earlier version).</p>`}
<div class="table-wrap"><table><thead><tr><th scope="col">Version</th><th scope="col">When</th><th scope="col">Author</th><th scope="col">Note</th><th scope="col">Action</th></tr></thead><tbody>
${versions.map(
  (
    v,
  ) => html`<tr><td>v${v.version}${v.current ? html` <strong>(current)</strong>` : ""}</td><td>${formatTime(v.createdAt)}</td><td>${v.author}</td><td>${v.note ?? ""}</td>
<td>${
    v.current
      ? ""
      : html`<form class="inline" method="post" action="/admin/catalog/${skill}/versions/${v.version}/restore"><input type="hidden" name="csrf" value="${c.get("csrf")}"><button type="submit" aria-label="Restore version ${v.version} of ${skill}">Restore v${v.version}</button></form>`
  }${v.current ? "" : html` <a href="/admin/catalog/${skill}?from=${v.version}&amp;to=${current}#diff">diff against current</a>`}</td></tr>`,
)}
</tbody></table></div>
<h2 id="diff">Diff</h2>
<form method="get" action="/admin/catalog/${skill}#diff"><label for="from">From</label> <select id="from" name="from">${versions.map((v) => html`<option value="${v.version}"${v.version === from ? html` selected` : ""}>v${v.version}</option>`)}</select>
<label for="to">to</label> <select id="to" name="to">${versions.map((v) => html`<option value="${v.version}"${v.version === to ? html` selected` : ""}>v${v.version}</option>`)}</select>
<button type="submit">Compare</button></form>
${await diffBlock(c, skill, from, to)}`;
    return renderDashboardPage({ title: `Catalog: ${skill}`, current: "catalog", ...frameOf(c) }, body);
  });

  routes.post("/catalog/:skill/versions/:version/restore", async (c) => {
    const skill = c.req.param("skill");
    const version = versionNumber.safeParse(c.req.param("version"));
    if (!SKILL_NAME_PATTERN.test(skill) || !version.success) return dashboardMessage(404, "No such version", "That skill version does not exist.", frameOf(c));
    // Experts whose catalog sets eval_settings.gate must pass their evals on the restored version.
    const stored = await getVersion(c.env.DB, skill, version.data);
    try {
      if (stored) await gateOnEvals(c.env, new URL(c.req.url).origin, skill, stored.config, await getSkill(c.env.DB, skill), false);
    } catch (error) {
      if (!(error instanceof EvalGateFailedError)) throw error;
      const failures = error.problems.map((problem) => `${problem.path}: ${problem.message}`).join("; ");
      return dashboardMessage(409, `v${version.data} of ${skill} was not restored`, `Its gated experts fail their evals: ${failures}`, frameOf(c));
    }
    const restored = await restoreSkillVersion(c.env, skill, version.data, c.get("session").user.login);
    return new Response(null, { status: 303, headers: { Location: `/admin/catalog/${skill}?restored=${restored}` } });
  });

  return routes;
}

async function diffBlock(c: DashboardContext, skill: string, from: number, to: number) {
  const [before, after] = await Promise.all([getVersion(c.env.DB, skill, from), getVersion(c.env.DB, skill, to)]);
  if (!before || !after) return html`<p class="error">One of the versions does not exist.</p>`;
  if (from === to) return html`<p class="muted">Pick two different versions to compare.</p>`;
  const lines = lineDiff(JSON.stringify(before.config, null, 2), JSON.stringify(after.config, null, 2));
  const changed = lines.filter((line) => line.kind !== "same").length;
  return html`<p>v${from} → v${to}: ${changed} changed line${changed === 1 ? "" : "s"}.</p>
<pre class="diff" aria-label="Differences between v${from} and v${to}">${lines.map((line) =>
    line.kind === "same" ? html`<span>  ${line.text}\n</span>` : line.kind === "removed" ? html`<del>- ${line.text}</del>` : html`<ins>+ ${line.text}</ins>`,
  )}</pre>`;
}
