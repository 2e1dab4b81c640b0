import { Hono } from "hono";
import { html } from "hono/html";
import { z } from "zod";
import { SERVER_ID_PATTERN, SKILL_NAME_PATTERN } from "../../catalog/catalog-schema";
import { checkSkillHealth, type SkillHealth } from "../../admin/skill-health";
import { getSkill, listSkills } from "../../catalog/catalog-store";
import { acceptToolChange, listPendingToolChanges, type PendingToolChange } from "../../downstream/tool-change-review";
import { invalidateToolLists } from "../../downstream/tool-list-invalidation";
import type { ServerUsage } from "../../admin/usage/server-usage";
import { dashboardMessage, formatMs, formatTime, renderDashboardPage } from "../dashboard-layout";
import { serverUsage } from "../run-stats";
import { onlySkill, skillFilterNotice, skillParam } from "../skill-filter";
import { frameOf, type DashboardContext, type DashboardEnv } from "../dashboard-context";

const PROBE_TIMEOUT_MS = 10_000;

const acceptForm = z.object({ hash: z.string().regex(/^[0-9a-f]{64}$/) });
const probeForm = z.object({ skill: z.string().regex(SKILL_NAME_PATTERN) });

/** Downstream servers per skill, with tool-definition changes waiting for review (old and new side by side). */
export function serverPages(): Hono<DashboardEnv> {
  const routes = new Hono<DashboardEnv>();

  routes.get("/servers", (c) => serversPage(c, undefined));

  // A probe connects to every server of one skill: a side effect, so only on POST with the
  // session's form token (checked by requireDashboardAdmin); a link from another site can no
  // longer start one (SameSite=Lax sends the cookie on a top-level GET).
  routes.post("/servers/probe", async (c) => {
    const form = probeForm.safeParse(await c.req.parseBody());
    if (!form.success) return dashboardMessage(400, "Cannot probe", "The form named no skill; reload the servers page and try again.", frameOf(c));
    return serversPage(c, form.data.skill);
  });

  routes.post("/servers/:skill/:server/tools/:tool/accept", async (c) => {
    const { skill, server, tool } = c.req.param();
    const form = acceptForm.safeParse(await c.req.parseBody());
    if (!SKILL_NAME_PATTERN.test(skill) || !SERVER_ID_PATTERN.test(server) || !form.success) {
      return dashboardMessage(400, "Cannot accept", "The form was incomplete; reload the servers page and try again.", frameOf(c));
    }
    const outcome = await acceptToolChange(c.env.DB, skill, server, tool, form.data.hash, c.get("session").user.login);
    if (outcome.status === "stale")
      return dashboardMessage(
        409,
        "Changed again",
        `${server}__${tool} changed again since you reviewed it. Reload the servers page and review the newest definition.`,
        frameOf(c),
      );
    if (outcome.status !== "accepted") return dashboardMessage(404, "Nothing to accept", `${server}__${tool} has no pending change in ${skill}.`, frameOf(c));
    await invalidateToolLists(c.env.CACHE, skill, server);
    return new Response(null, { status: 303, headers: { Location: `/admin/servers?accepted=${encodeURIComponent(`${server}__${tool}`)}` } });
  });

  return routes;
}

async function serversPage(c: DashboardContext, probe: string | undefined): Promise<Response> {
  const only = skillParam(c.req.query("skill"));
  const summaries = onlySkill(await listSkills(c.env.DB), only);
  const sections = await Promise.all(
    summaries.map(async (summary) => ({ skill: await getSkill(c.env.DB, summary.name), pending: await listPendingToolChanges(c.env.DB, summary.name) })),
  );
  const usage = await serverUsage(c.env.DB);
  const accepted = c.req.query("accepted");
  // On demand only (the probe form), so the page itself stays fast.
  const probeSkill = probe === undefined ? null : (sections.find(({ skill }) => skill !== null && skill.name === probe)?.skill ?? null);
  const health = probeSkill ? await checkSkillHealth(c.env, probeSkill.name, probeSkill.version, probeSkill.config, PROBE_TIMEOUT_MS) : undefined;
  const body = html`<h1>Servers</h1>
${skillFilterNotice(only, "/admin/servers")}
${accepted ? html`<p class="notice" role="status">Accepted the new definition of <code>${accepted}</code>; experts may call it again.</p>` : ""}
${sections.map(({ skill, pending }) =>
  skill === null
    ? ""
    : html`<section aria-labelledby="servers-${skill.name}"><h2 id="servers-${skill.name}">${skill.name}</h2>
<form class="inline" method="post" action="/admin/servers/probe#servers-${skill.name}"><input type="hidden" name="csrf" value="${c.get("csrf")}"><input type="hidden" name="skill" value="${skill.name}"><button type="submit">Probe ${skill.name}'s servers now</button></form>
${
  Object.keys(skill.config.servers).length === 0
    ? html`<p class="muted">No downstream servers.</p>`
    : html`<div class="table-wrap"><table><thead><tr><th scope="col">Server</th><th scope="col">Endpoint</th><th scope="col">Transport</th><th scope="col">Timeouts</th>${health?.skill === skill.name ? html`<th scope="col">Health (probed now)</th>` : ""}<th scope="col">Calls 24 h (1 h)</th><th scope="col">Errors 24 h (1 h)</th><th scope="col">p50 / p95</th><th scope="col">Last error</th><th scope="col">Pending changes</th></tr></thead><tbody>
${Object.entries(skill.config.servers).map(
  ([
    id,
    server,
  ]) => html`<tr><td><code>${id}</code>${server.description ? html`<br><span class="muted">${server.description}</span>` : ""}</td><td><code>${server.binding ? `binding ${server.binding}` : (server.url ?? "")}</code></td>
<td>${server.transport}</td><td>connect ${server.connect_timeout_ms} ms · call ${server.call_timeout_ms} ms</td>${health?.skill === skill.name ? healthCell(health, id) : ""}${usageCells(usage.servers.find((entry) => entry.skill === skill.name && entry.server === id))}<td>${pendingCount(pending, id)}</td></tr>`,
)}
</tbody></table></div>`
}
${pending.map((change) => pendingChange(c, skill.name, change))}
</section>`,
)}`;
  return renderDashboardPage({ title: "Servers", current: "servers", ...frameOf(c) }, body);
}

function healthCell(health: SkillHealth, serverId: string) {
  const server = health.servers.find((entry) => entry.server === serverId);
  if (!server) return html`<td class="muted">not probed</td>`;
  if (!server.ok) return html`<td><span class="bad">failing</span> after ${server.latencyMs} ms<br><span class="muted">${server.error ?? ""}</span></td>`;
  // Per-member servers are probed without anyone's token: up, and each member signs in.
  if (server.signIn === "needs-each-member")
    return html`<td><span class="ok">ok</span> in ${server.latencyMs} ms<br>${server.note ?? "needs each member's sign-in"}</td>`;
  const missing = server.missingTools ?? [];
  return html`<td><span class="ok">ok</span> in ${server.latencyMs} ms · ${server.toolCount ?? 0} tools${server.signIn === "team-connected" ? " as the team's account" : ""}${
    missing.length > 0 ? html`<br><span class="warn">missing: ${missing.map((entry) => `${entry.expert} → ${entry.tool}`).join(", ")}</span>` : ""
  }</td>`;
}

function usageCells(usage: ServerUsage | undefined) {
  if (!usage) return html`<td>0</td><td>0</td><td class="muted">—</td><td class="muted">none</td>`;
  const { lastDay, lastHour } = usage;
  return html`<td>${lastDay.calls} (${lastHour.calls})</td><td${lastDay.errors > 0 ? html` class="bad"` : ""}>${lastDay.errors} (${lastHour.errors})</td>
<td>${formatMs(lastDay.latencyMs.p50)} / ${formatMs(lastDay.latencyMs.p95)}</td><td>${lastDay.lastError ? html`${formatTime(lastDay.lastError.at)}<br><span class="muted">${lastDay.lastError.message}</span>` : html`<span class="muted">none</span>`}</td>`;
}

function pendingCount(pending: readonly PendingToolChange[], server: string) {
  const count = pending.filter((change) => change.server === server).length;
  return count === 0 ? html`<span class="muted">none</span>` : html`<a class="warn" href="#change-${server}">${count} waiting for review</a>`;
}

function pendingChange(c: DashboardContext, skill: string, change: PendingToolChange) {
  const name = `${change.server}__${change.tool}`;
  const { pinned } = change;
  const form = html`<form method="post" action="/admin/servers/${skill}/${change.server}/tools/${encodeURIComponent(change.tool)}/accept"><input type="hidden" name="csrf" value="${c.get("csrf")}"><input type="hidden" name="hash" value="${change.pending.hash}"><button type="submit" aria-label="Accept the ${pinned === null ? "new tool" : "new definition of"} ${name}">${pinned === null ? "Accept new tool" : "Accept new definition"}</button></form>`;
  if (pinned === null) {
    // Added by the server after its first listing (tool-pins.ts): nothing was ever approved, so there is no old side.
    return html`<article id="change-${change.server}" aria-label="New tool ${name}"><h3>New tool: <code>${name}</code></h3>
<p class="muted">Seen ${formatTime(change.pending.seenAt)}, after the server's first listing; withheld from the experts until accepted.</p>
<div><h4>Now served (new)</h4><pre>${JSON.stringify(change.pending.definition, null, 2)}</pre></div>
${form}</article>`;
  }
  return html`<article id="change-${change.server}" aria-label="Pending change of ${name}"><h3>Tool definition changed: <code>${name}</code></h3>
<p class="muted">Seen ${formatTime(change.pending.seenAt)}; withheld from the experts until accepted. Pinned ${formatTime(pinned.pinnedAt)} by ${pinned.pinnedBy}.</p>
<div class="side"><div><h4>Pinned (old)</h4><pre>${JSON.stringify(pinned.definition, null, 2)}</pre></div><div><h4>Now served (new)</h4><pre>${JSON.stringify(change.pending.definition, null, 2)}</pre></div></div>
${form}</article>`;
}
