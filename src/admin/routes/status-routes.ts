import { Hono } from "hono";
import { z } from "zod";
import { getSkill, listSkills } from "../../catalog/catalog-store";
import { checkSkillName, skillParam, type AdminEnv } from "../admin-context";
import { InvalidParameterError, SkillNotFoundError } from "../admin-errors";
import { DEFAULT_PROBE_TIMEOUT_MS } from "../model-probe";
import { reportModels, type ExpertRef } from "../model-usability";
import { checkSkillHealth } from "../skill-health";
import { liveSkill } from "../skill-writes";

const DEFAULT_HEALTH_TIMEOUT_MS = 10_000;
const timeoutSchema = z.coerce.number().int().min(100).max(30_000).default(DEFAULT_HEALTH_TIMEOUT_MS);
const probeTimeoutSchema = z.coerce.number().int().min(100).max(30_000).default(DEFAULT_PROBE_TIMEOUT_MS);

/** Whether a skill's servers and the catalog's models work right now. */
export function statusRoutes(): Hono<AdminEnv> {
  const routes = new Hono<AdminEnv>();

  routes.get("/skills/:skill/health", async (c) => {
    const skill = await liveSkill(c, skillParam(c));
    const timeout = timeoutSchema.safeParse(c.req.query("timeout_ms"));
    if (!timeout.success)
      throw new InvalidParameterError("timeout_ms", "must be a whole number from 100 to 30000", "Leave it out for the default of 10000 ms.");
    return c.json(await checkSkillHealth(c.env, skill.name, skill.version, skill.config, timeout.data));
  });

  routes.get("/models", async (c) => {
    const only = c.req.query("skill");
    const probe = c.req.query("probe");
    if (probe !== undefined && probe !== "1" && probe !== "0")
      throw new InvalidParameterError("probe", "must be 1 or 0", "Send probe=1 to make one real one-token call per model, or leave it out.");
    const timeout = probeTimeoutSchema.safeParse(c.req.query("timeout_ms"));
    if (!timeout.success) throw new InvalidParameterError("timeout_ms", "must be a whole number from 100 to 30000", "Leave it out for the default of 5000 ms.");
    const names = only === undefined ? (await listSkills(c.env.DB)).map(({ name }) => name) : [checkSkillName(only)];
    const experts: ExpertRef[] = [];
    for (const name of names) {
      const live = await getSkill(c.env.DB, name);
      if (!live && only !== undefined) throw new SkillNotFoundError(name);
      for (const expert of live?.config.experts ?? []) experts.push({ skill: name, expert });
    }
    return c.json({ models: await reportModels(c.env, experts, probe === "1" ? { probeTimeoutMs: timeout.data } : {}) });
  });

  return routes;
}
