import { Hono } from "hono";
import { getSkill, listSkills } from "../../catalog/catalog-store";
import type { SkillConfig } from "../../catalog/catalog-schema";
import { parseCatalog } from "../../catalog/parse-catalog";
import { readJsonBody, type AdminEnv } from "../admin-context";
import { InvalidBodyError } from "../admin-errors";
import { replaceWholeCatalog } from "../skill-writes";

/** The whole catalog: read it, replace it, or check a document without saving it. */
export function catalogRoutes(): Hono<AdminEnv> {
  const routes = new Hono<AdminEnv>();

  routes.get("/catalog", async (c) => {
    const skills: Record<string, SkillConfig> = {};
    for (const { name } of await listSkills(c.env.DB)) {
      const live = await getSkill(c.env.DB, name);
      if (live) skills[name] = live.config;
    }
    return c.json({ skills });
  });

  routes.put("/catalog", async (c) => {
    const result = await replaceWholeCatalog(c, await readJsonBody(c));
    return c.json({ skills: result.versions, removed: result.removed });
  });

  routes.post("/validate", async (c) => {
    const result = parseCatalog(await readJsonBody(c));
    if (!result.ok) throw new InvalidBodyError(result.problems);
    return c.json({ ok: true, skills: Object.keys(result.catalog.skills) });
  });

  routes.get("/skills", async (c) => c.json({ skills: await listSkills(c.env.DB) }));

  return routes;
}
