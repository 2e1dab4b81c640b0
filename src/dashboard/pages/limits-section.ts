import { html } from "hono/html";
import type { SkillConfig, UsageLimits } from "../../catalog/catalog-schema";
import { liveCountersOfDay } from "../../experts/session/live-usage";
import { nextUtcMidnight } from "../../experts/limits/usage-counters";

/** Today's counters of a limited skill against its catalog limits: the whole skill, then each user. */
export async function limitsSection(env: Env, skill: string, config: SkillConfig, now = Date.now()) {
  const limits = config.limits;
  // A table of counters against no limit would be headers only: say what is (not) set, and how to set it.
  if (!anyLimit(limits?.per_skill) && !anyLimit(limits?.per_user))
    return html`<h3>Usage limits</h3>
<p class="no-limits"><strong>No limits set</strong>: runs, tokens and cost of this skill are not capped. Set them in the catalog under <code>skills.${skill}.limits</code>, <code>per_user</code> or <code>per_skill</code> (<code>runs_per_day</code>, <code>tokens_per_day</code>, <code>cost_per_day_usd</code>, <code>runs_in_flight</code>), then push it with <code>npx slipsnisse push</code>.</p>`;
  const counters = await liveCountersOfDay(env, skill, limits, now);
  const rows = [
    ...(anyLimit(limits?.per_skill) ? [{ who: "whole skill", row: counters.skill, of: limits?.per_skill ?? {} }] : []),
    ...(anyLimit(limits?.per_user) ? counters.users.map((user) => ({ who: user.userId, row: user, of: limits?.per_user ?? {} })) : []),
  ];
  const heading = html`<h3>Usage against limits today (UTC ${counters.day}; resets ${nextUtcMidnight(now)})</h3>`;
  if (rows.length === 0) return html`${heading}<p class="muted">No runs counted today: each user's row appears with their first run.</p>`;
  return html`${heading}
<div class="table-wrap"><table><thead><tr><th scope="col">Who</th><th scope="col">Runs</th><th scope="col">Tokens</th><th scope="col">Cost (USD)</th><th scope="col">In flight</th></tr></thead><tbody>
${rows.map(
  ({ who, row, of }) =>
    html`<tr><td>${who}</td><td>${against(row.runs, of, "runs_per_day")}</td><td>${against(row.tokens, of, "tokens_per_day")}</td><td>${against(Math.round(row.cost_usd * 10_000) / 10_000, of, "cost_per_day_usd")}</td><td>${against(row.in_flight, of, "runs_in_flight")}</td></tr>`,
)}
</tbody></table></div>`;
}

function anyLimit(limits: UsageLimits | undefined): limits is UsageLimits {
  return limits !== undefined && Object.values(limits).some((value) => value !== undefined);
}

function against(used: number, limits: UsageLimits, name: keyof UsageLimits) {
  const limit = limits[name];
  if (limit === undefined) return html`${used} <span class="muted">(no limit)</span>`;
  return html`<span${used >= limit ? html` class="bad"` : ""}>${used} of ${limit}</span>`;
}
