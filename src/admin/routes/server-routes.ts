import { Hono } from "hono";
import { isRawObject } from "../../catalog/checks/raw-json";
import type { SkillConfig } from "../../catalog/catalog-schema";
import { readJsonBody, skillParam, type AdminEnv } from "../admin-context";
import { DuplicateEntryError, EntryNotFoundError, InvalidBodyError, ServerInUseError } from "../admin-errors";
import { validateSkillDocument } from "../skill-document";
import { liveSkill, saveSkill } from "../skill-writes";

/**
 * A skill's downstream servers one at a time. POST takes the server with its `id` in the body;
 * PUT replaces the server named in the URL.
 */
export function serverRoutes(): Hono<AdminEnv> {
  const routes = new Hono<AdminEnv>();

  routes.post("/skills/:skill/servers", async (c) => {
    const skill = skillParam(c);
    const body = await readJsonBody(c);
    const live = await liveSkill(c, skill);
    const { id, server } = splitId(body);
    if (Object.hasOwn(live.config.servers, id)) throw new DuplicateEntryError(skill, "server", id);
    const document = { ...live.config, servers: { ...live.config.servers, [id]: server } };
    const config = validateWithIdAt(skill, document, id);
    return c.json({ ...(await saveSkill(c, skill, config, live)), server: id }, 201);
  });

  routes.put("/skills/:skill/servers/:id", async (c) => {
    const skill = skillParam(c);
    const id = c.req.param("id");
    const body = await readJsonBody(c);
    const live = await liveSkill(c, skill);
    if (!Object.hasOwn(live.config.servers, id)) throw new EntryNotFoundError(skill, "server", id);
    const document = { ...live.config, servers: { ...live.config.servers, [id]: body } };
    const config = validateSkillDocument(skill, document, ["servers", id]);
    return c.json({ ...(await saveSkill(c, skill, config, live)), server: id });
  });

  routes.delete("/skills/:skill/servers/:id", async (c) => {
    const skill = skillParam(c);
    const id = c.req.param("id");
    const live = await liveSkill(c, skill);
    if (!Object.hasOwn(live.config.servers, id)) throw new EntryNotFoundError(skill, "server", id);
    const servers = Object.fromEntries(Object.entries(live.config.servers).filter(([serverId]) => serverId !== id));
    const config = withoutServer(skill, id, { ...live.config, servers });
    return c.json({ ...(await saveSkill(c, skill, config, live)), server: id, deleted: true });
  });

  return routes;
}

function splitId(body: unknown): { id: string; server: unknown } {
  if (!isRawObject(body)) {
    throw new InvalidBodyError([{ path: "$", message: "expected an object (a server with its `id`)", fix: 'send {"id": "docs", "url": "https://…/mcp"}' }]);
  }
  const { id, ...server } = body;
  if (typeof id !== "string" || id === "") {
    throw new InvalidBodyError([
      { path: "$.id", message: "`id` is required: the server's name in this skill", fix: 'add "id", e.g. "docs"; experts name it in internal_tools' },
    ]);
  }
  return { id, server };
}

/** The server's id came in the body, so a problem with the id itself is reported at `$.id`. */
function validateWithIdAt(skill: string, document: unknown, id: string): SkillConfig {
  try {
    return validateSkillDocument(skill, document, ["servers", id]);
  } catch (error) {
    if (!(error instanceof InvalidBodyError)) throw error;
    throw new InvalidBodyError(
      error.problems.map((problem) => (problem.path === "$" && problem.message.startsWith("server id") ? { ...problem, path: "$.id" } : problem)),
    );
  }
}

/** The skill without the server; experts that still whitelist its tools make this a conflict. */
function withoutServer(skill: string, id: string, document: unknown): SkillConfig {
  try {
    return validateSkillDocument(skill, document, ["servers", id]);
  } catch (error) {
    if (error instanceof InvalidBodyError) throw new ServerInUseError(skill, id, error.problems);
    throw error;
  }
}
