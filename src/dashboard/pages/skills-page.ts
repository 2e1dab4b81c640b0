import { html } from "hono/html";
import { DEFAULT_SKILL } from "../../catalog/catalog-schema";
import { getSkill, listSkills } from "../../catalog/catalog-store";
import { formatMs, renderDashboardPage } from "../dashboard-layout";
import { recentUsage } from "../run-stats";
import { onlySkill, skillFilterNotice, skillParam } from "../skill-filter";
import { limitsSection } from "./limits-section";
import { evalsPath } from "./eval-pages";
import { breakable } from "../breakable-name";
import { frameOf, type DashboardContext } from "../dashboard-context";

/** Where a skill is served: the default skill at `/mcp` (mcp-endpoint.ts), a named one at `/s/<skill>/mcp`. */
export function endpointOf(skill: string): string {
  return skill === DEFAULT_SKILL ? "/mcp" : `/s/${skill}/mcp`;
}

/** Each skill's experts: description, model, budget and the tools each may call. */
export async function skillsPage(c: DashboardContext): Promise<Response> {
  const only = skillParam(c.req.query("skill"));
  const summaries = onlySkill(await listSkills(c.env.DB), only);
  const skills = (await Promise.all(summaries.map((summary) => getSkill(c.env.DB, summary.name)))).filter((skill) => skill !== null);
  const usage = await recentUsage(c.env.DB, 7, ["skill", "expert"], only === undefined ? {} : { skill: only });
  const usageOf = (skill: string, expert: string) => usage.find((group) => group.skill === skill && group.expert === expert);
  const limits = await Promise.all(skills.map((skill) => limitsSection(c.env, skill.name, skill.config)));
  const body = html`<h1>Skills and experts</h1>
${skillFilterNotice(only, "/admin/skills")}
${skills.length === 0 ? html`<p class="muted">No skills yet.</p>` : ""}
${skills.map(
  (skill) => html`<section aria-labelledby="skill-${skill.name}"><h2 id="skill-${skill.name}">${skill.name} <span class="muted">v${skill.version}</span></h2>
${skill.config.description ? html`<p>${skill.config.description}</p>` : ""}
<p class="muted">Endpoint <code>${endpointOf(skill.name)}</code> · <a href="/admin/evals#skill-${skill.name}">evals</a> · <a href="/admin/catalog/${skill.name}">catalog history</a> · tool policy: allowed <code>${skill.config.tool_policy.allowed.join(", ")}</code>${
    skill.config.tool_policy.blocked.length > 0 ? html`, blocked <code>${skill.config.tool_policy.blocked.join(", ")}</code>` : ""
  }; needs approval: ${
    skill.config.tool_policy.requires_approval.length > 0 ? html`<code>${skill.config.tool_policy.requires_approval.join(", ")}</code>` : "no pattern"
  }, ${skill.config.tool_policy.approve_destructive ? "and every tool its server marks destructive (destructiveHint)" : "not destructive tools as such (approve_destructive: false)"}</p>
<div class="table-wrap"><table><thead><tr><th scope="col">Expert</th><th scope="col">Description</th><th scope="col">Model</th><th scope="col">Budget</th><th scope="col">Tools (whitelist)</th><th scope="col">Runs (7 days)</th><th scope="col">p50</th></tr></thead><tbody>
${skill.config.experts.map(
  (
    expert,
  ) => html`<tr><td><code class="name">${breakable(expert.name)}</code><br><span class="muted">${expert.mode}</span> · <a href="${evalsPath(skill.name, expert.name)}" aria-label="Evals of ${expert.name}">${expert.evals?.length ?? 0} evals</a></td><td>${expert.description}</td><td>${expert.provider}<br><code>${expert.model ?? "(default)"}</code></td>
<td>${expert.budget.max_steps} steps · ${expert.budget.max_tool_calls} tool calls · ${expert.budget.timeout_ms / 1000} s · ${expert.budget.max_output_tokens} output tokens</td>
<td>${
    Object.keys(expert.internal_tools).length === 0
      ? html`<span class="muted">none</span>`
      : html`<ul>${Object.entries(expert.internal_tools).map(([server, tools]) => html`<li><code class="name">${breakable(server)}</code>: ${tools.map((tool, index) => html`${index > 0 ? ", " : ""}<span class="name">${breakable(tool)}</span>`)}</li>`)}</ul>`
  }</td><td><a href="/admin/runs?skill=${skill.name}&amp;expert=${expert.name}">${usageOf(skill.name, expert.name)?.runs ?? 0}</a></td><td>${formatMs(usageOf(skill.name, expert.name)?.latencyMs.p50)}</td></tr>`,
)}
</tbody></table></div>${limits[skills.indexOf(skill)] ?? ""}</section>`,
)}`;
  return renderDashboardPage({ title: "Skills and experts", current: "skills", ...frameOf(c) }, body);
}
