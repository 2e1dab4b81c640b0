import { Hono } from "hono";
import { getSkill } from "../../catalog/catalog-store";
import { liveCountersOfDay, type UsageRow } from "../../experts/session/live-usage";
import { nextUtcMidnight } from "../../experts/limits/usage-counters";
import { skillParam, type AdminEnv } from "../admin-context";
import { SkillNotFoundError } from "../admin-errors";

/**
 * Today's usage against a skill's limits: the skill's own counters and each user's, beside the
 * catalog's values, read from the objects that own them (live-usage.ts); each row's `asOf` says
 * when its numbers were true. Counters exist only for limited subjects (an unlimited skill writes none).
 */
export function limitRoutes(): Hono<AdminEnv> {
  const routes = new Hono<AdminEnv>();
  routes.get("/skills/:skill/limits", async (c) => {
    const skill = skillParam(c);
    const stored = await getSkill(c.env.DB, skill);
    if (!stored) throw new SkillNotFoundError(skill);
    const now = Date.now();
    const counters = await liveCountersOfDay(c.env, skill, stored.config.limits, now);
    return c.json({
      skill,
      day: counters.day,
      resetsAt: nextUtcMidnight(now),
      limits: stored.config.limits ?? {},
      perSkill: usageOf(counters.skill),
      perUser: counters.users.map(({ userId, ...row }) => ({ userId, ...usageOf(row) })),
    });
  });
  return routes;
}

function usageOf(row: UsageRow) {
  return {
    runs_per_day: row.runs,
    tokens_per_day: row.tokens,
    cost_per_day_usd: row.cost_usd,
    runs_in_flight: row.in_flight,
    asOf: row.asOf === null ? null : new Date(row.asOf).toISOString(),
  };
}
