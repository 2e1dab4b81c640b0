import { html } from "hono/html";
import type { SkillConfig, UsageLimits } from "../../catalog/catalog-schema";
import { liveCountersOfDay } from "../../experts/limits/live-usage";
import { nextUtcMidnight } from "../../experts/limits/usage-counters";

/** Today's counters of a limited skill against its catalog limits: the whole skill, then each user. */
export async function limitsSection(env: Env, skill: string, config: SkillConfig, now = Date.now()) {
  const limits = config.limits;
  if (!limits || (!limits.per_skill && !limits.per_user)) return "";
  const counters = await liveCountersOfDay(env, skill, limits, now);
  const rows = [
    ...(limits.per_skill ? [{ who: "whole skill", row: counters.skill, of: limits.per_skill }] : []),
    ...(limits.per_user ? counters.users.map((user) => ({ who: user.userId, row: user, of: limits.per_user ?? {} })) : []),
  ];
  return html`<h3>Usage against limits today (UTC ${counters.day}; resets ${nextUtcMidnight(now)})</h3>
<div class="table-wrap"><table><thead><tr><th scope="col">Who</th><th scope="col">Runs</th><th scope="col">Tokens</th><th scope="col">Cost (USD)</th><th scope="col">In flight</th></tr></thead><tbody>
${rows.map(
  ({ who, row, of }) =>
    html`<tr><td>${who}</td><td>${against(row.runs, of, "runs_per_day")}</td><td>${against(row.tokens, of, "tokens_per_day")}</td><td>${against(Math.round(row.cost_usd * 10_000) / 10_000, of, "cost_per_day_usd")}</td><td>${against(row.in_flight, of, "runs_in_flight")}</td></tr>`,
)}
</tbody></table></div>`;
}

function against(used: number, limits: UsageLimits, name: keyof UsageLimits) {
  const limit = limits[name];
  if (limit === undefined) return html`${used} <span class="muted">(no limit)</span>`;
  return html`<span${used >= limit ? html` class="bad"` : ""}>${used} of ${limit}</span>`;
}
