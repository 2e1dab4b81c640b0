import { Hono } from "hono";
import type { SkillConfig } from "../../catalog/catalog-schema";
import { isRawObject } from "../../catalog/checks/raw-json";
import { readJsonBody, skillParam, type AdminEnv } from "../admin-context";
import { DuplicateEntryError, EntryNotFoundError, InvalidBodyError } from "../admin-errors";
import { validateSkillDocument } from "../skill-document";
import { liveSkill, saveSkill } from "../skill-writes";

/**
 * A skill's experts one at a time. PUT replaces the expert named in the URL; a different `name`
 * in the body renames it (409 when another expert has that name).
 */
export function expertRoutes(): Hono<AdminEnv> {
  const routes = new Hono<AdminEnv>();

  routes.post("/skills/:skill/experts", async (c) => {
    const skill = skillParam(c);
    const body = expertBody(await readJsonBody(c), undefined);
    const live = await liveSkill(c, skill);
    const name = body.name;
    if (typeof name === "string" && live.config.experts.some((expert) => expert.name === name)) {
      throw new DuplicateEntryError(skill, "expert", name);
    }
    const experts: unknown[] = [...live.config.experts, body];
    const config = validateSkillDocument(skill, { ...live.config, experts }, ["experts", experts.length - 1]);
    return c.json({ ...(await saveSkill(c, skill, config, live)), expert: name }, 201);
  });

  routes.put("/skills/:skill/experts/:name", async (c) => {
    const skill = skillParam(c);
    const current = c.req.param("name");
    const body = expertBody(await readJsonBody(c), current);
    const live = await liveSkill(c, skill);
    const index = live.config.experts.findIndex((expert) => expert.name === current);
    if (index < 0) throw new EntryNotFoundError(skill, "expert", current);
    if (body.name !== current && live.config.experts.some((expert) => expert.name === body.name)) {
      throw new DuplicateEntryError(skill, "expert", String(body.name));
    }
    const experts: unknown[] = live.config.experts.map((expert, i) => (i === index ? body : expert));
    const config = validateSkillDocument(skill, { ...live.config, experts }, ["experts", index]);
    const renamedFrom = new Map([[String(body.name), current]]);
    return c.json({ ...(await saveSkill(c, skill, config, live, renamedFrom)), expert: body.name });
  });

  routes.delete("/skills/:skill/experts/:name", async (c) => {
    const skill = skillParam(c);
    const name = c.req.param("name");
    const live = await liveSkill(c, skill);
    if (!live.config.experts.some((expert) => expert.name === name)) throw new EntryNotFoundError(skill, "expert", name);
    const config: SkillConfig = { ...live.config, experts: live.config.experts.filter((expert) => expert.name !== name) };
    return c.json({ ...(await saveSkill(c, skill, validateSkillDocument(skill, config, []), live)), expert: name, deleted: true });
  });

  return routes;
}

/** An expert object; on PUT the URL names it when the body does not. */
function expertBody(body: unknown, nameFromUrl: string | undefined): Record<string, unknown> {
  if (!isRawObject(body)) {
    throw new InvalidBodyError([
      { path: "$", message: "expected an object (an expert)", fix: 'send {"name": "ask_docs", "description": "…", "internal_tools": {…}}' },
    ]);
  }
  return body.name === undefined && nameFromUrl !== undefined ? { ...body, name: nameFromUrl } : body;
}
