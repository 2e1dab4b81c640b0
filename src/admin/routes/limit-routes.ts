import { Hono } from "hono";
import { getSkill } from "../../catalog/catalog-store";
import { countersOfDay, nextUtcMidnight } from "../../experts/limits/usage-counters";
import { skillParam, type AdminEnv } from "../admin-context";
import { SkillNotFoundError } from "../admin-errors";

/**
 * Today's usage against a skill's limits: the skill's own counters and each user's, beside the
 * catalog's values. Counters exist only for limited subjects (an unlimited skill writes none).
 */
export function limitRoutes(): Hono<AdminEnv> {
  const routes = new Hono<AdminEnv>();
  routes.get("/skills/:skill/limits", async (c) => {
    const skill = skillParam(c);
    const stored = await getSkill(c.env.DB, skill);
    if (!stored) throw new SkillNotFoundError(skill);
    const now = Date.now();
    const counters = await countersOfDay(c.env.DB, skill, now);
    return c.json({
      skill,
      day: counters.day,
      resetsAt: nextUtcMidnight(now),
      limits: stored.config.limits ?? {},
      perSkill: usageOf(counters.skill),
      perUser: counters.users.map(({ user_id, ...row }) => ({ userId: user_id, ...usageOf(row) })),
    });
  });
  return routes;
}

function usageOf(row: { runs: number; tokens: number; cost_usd: number; in_flight: number }) {
  return { runs_per_day: row.runs, tokens_per_day: row.tokens, cost_per_day_usd: row.cost_usd, runs_in_flight: row.in_flight };
}
