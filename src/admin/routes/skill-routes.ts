import { Hono } from "hono";
import { removeSkill } from "../../catalog/catalog-service";
import { getSkill } from "../../catalog/catalog-store";
import { readJsonBody, skillParam, type AdminEnv } from "../admin-context";
import { SkillNotFoundError } from "../admin-errors";
import { validateSkillDocument } from "../skill-document";
import { liveSkill, saveSkill } from "../skill-writes";

/** One whole skill: its servers, tool policy and experts in one document. */
export function skillRoutes(): Hono<AdminEnv> {
  const routes = new Hono<AdminEnv>();

  routes.get("/skills/:skill", async (c) => {
    const live = await liveSkill(c, skillParam(c));
    return c.json({ name: live.name, version: live.version, config: live.config });
  });

  routes.put("/skills/:skill", async (c) => {
    const skill = skillParam(c);
    const config = validateSkillDocument(skill, await readJsonBody(c), []);
    const live = await getSkill(c.env.DB, skill);
    const change = await saveSkill(c, skill, config, live);
    return c.json(change, live ? 200 : 201);
  });

  routes.delete("/skills/:skill", async (c) => {
    const skill = skillParam(c);
    if (!(await removeSkill(c.env, skill))) throw new SkillNotFoundError(skill);
    return c.json({ skill, deleted: true });
  });

  return routes;
}
