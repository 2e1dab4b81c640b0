import { Hono } from "hono";
import { z } from "zod";
import { SKILL_NAME_PATTERN, TOOL_NAME_PATTERN } from "../../catalog/catalog-schema";
import { D1_TABLES } from "../../storage-keys";
import type { AdminEnv } from "../admin-context";
import { parseQuery, timeParam } from "../admin-query";
import { USAGE_DIMENSIONS, type UsageDimension } from "../usage/run-usage";
import { queryUsage } from "../usage/usage-query";
import { aggregateServerUsage, type ServerCall } from "../usage/server-usage";

const DAY_MS = 86_400_000;
const DEFAULT_WINDOW_MS = 7 * DAY_MS;
/** Rows read per request; past this the answer says `truncated` instead of running unbounded. */
const MAX_ROWS = 50_000;

const groupByParam = z
  .string()
  .transform((value) => [
    ...new Set(
      value
        .split(",")
        .map((part) => part.trim())
        .filter((part) => part.length > 0),
    ),
  ])
  .pipe(z.array(z.enum(USAGE_DIMENSIONS)).min(1));

const usageShape = {
  from: timeParam.optional(),
  to: timeParam.optional(),
  group_by: groupByParam.default(["skill", "expert"]),
  skill: z.string().regex(SKILL_NAME_PATTERN, "is not a skill name").optional(),
  expert: z.string().regex(TOOL_NAME_PATTERN, "is not an expert name").optional(),
  user: z.string().trim().min(1).max(200).optional(),
};

const serverUsageShape = {
  skill: z.string().regex(SKILL_NAME_PATTERN, "is not a skill name").optional(),
};

/**
 * Usage and cost from the tenant's run index: per skill, expert, user and day (runs, outcomes,
 * tokens, tool calls, downstream bytes, p50/p95 latency, cost where the catalog prices the
 * model), and per downstream server over the last hour and day.
 */
export function usageRoutes(): Hono<AdminEnv> {
  const routes = new Hono<AdminEnv>();

  routes.get("/usage", async (c) => {
    const query = parseQuery(c, z.object(usageShape), {
      from: "Use epoch milliseconds or an ISO 8601 date or date-time (UTC); default: 7 days before `to`.",
      to: "Use epoch milliseconds or an ISO 8601 date or date-time (UTC), exclusive; default: now.",
      group_by: `Use a comma-separated list of ${USAGE_DIMENSIONS.join(", ")}, e.g. group_by=skill,day.`,
      skill: "Use a skill name as listed by GET /admin/api/skills.",
      expert: "Use an expert's tool name, e.g. ask_docs.",
      user: "Use a user id as runs show it (user.id).",
    });
    const to = query.to ?? Date.now();
    const from = query.from ?? to - DEFAULT_WINDOW_MS;
    const groupBy: UsageDimension[] = query.group_by;
    const groups = await queryUsage(c.env.DB, { skill: query.skill, expert: query.expert, user: query.user, from, to }, groupBy);
    // D1 adds every run up, so nothing is cut any more; `truncated` stays for clients that read it.
    return c.json({ from, to, group_by: groupBy, truncated: false, groups });
  });

  routes.get("/servers/usage", async (c) => {
    const query = parseQuery(c, z.object(serverUsageShape), { skill: "Use a skill name as listed by GET /admin/api/skills, or leave it out for every skill." });
    const now = Date.now();
    const rows = await c.env.DB.prepare(
      `SELECT skill, server_id, status, elapsed_ms, error, at FROM ${D1_TABLES.runToolCalls}
       WHERE at >= ? AND at <= ? ${query.skill ? "AND skill = ?" : ""} ORDER BY at DESC LIMIT ?`,
    )
      .bind(now - DAY_MS, now, ...(query.skill ? [query.skill] : []), MAX_ROWS + 1)
      .all<ServerCall>();
    return c.json({ at: now, truncated: rows.results.length > MAX_ROWS, servers: aggregateServerUsage(rows.results.slice(0, MAX_ROWS), now) });
  });

  return routes;
}
