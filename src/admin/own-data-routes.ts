import { Hono } from "hono";
import { z } from "zod";
import { signedInUser, type UserProps } from "../auth/user-props";
import { getSkill, listSkills } from "../catalog/catalog-store";
import { canUseSkill } from "../catalog/skill-access";
import { sessionStub } from "../experts/session/session-name";
import { log } from "../observability/logger";
import { checkSkillName } from "./admin-context";
import { AdminApiError, InvalidParameterError, SkillNotFoundError } from "./admin-errors";
import { OwnEntryNotFoundError } from "./member-errors";
import { connectionsStub } from "../downstream/connections/connection-target";
import { describeConnection, removeConnections } from "./connection-overview";

type OwnEnv = { Bindings: Env; Variables: { user: UserProps } };

const limitSchema = z.coerce.number().int().min(1).max(200).default(50);
const threadIdSchema = z.string().regex(/^th_[A-Za-z0-9_-]{1,64}$/);
const runIdSchema = z.uuid();

/**
 * A member's own data, at /me/api with their OAuth access token (the same token their MCP
 * client holds): the skills they may use, and their threads and runs in each, which they may
 * delete. Only ever the caller's own session (tenant, skill and the token's user id): no
 * parameter names another user. Refusals are the admin API's `{error, fix}`.
 */
export function ownDataRoutes(): Hono<OwnEnv> {
  const routes = new Hono<OwnEnv>();
  routes.use("*", async (c, next) => {
    const user = signedInUser(c.executionCtx.props);
    if (user === undefined)
      return c.json({ error: "Sign-in required.", fix: "Send Authorization: Bearer <your access token>, the one your MCP client got at sign-in." }, 401);
    c.set("user", user);
    await next();
  });

  routes.get("/skills", async (c) => {
    const user = c.get("user");
    const skills = [];
    for (const { name } of await listSkills(c.env.DB)) {
      const stored = await getSkill(c.env.DB, name);
      if (stored && canUseSkill(name, stored.config, user)) skills.push({ name, retentionDays: stored.config.retention_days });
    }
    return c.json({ userId: user.userId, skills });
  });

  // The member's own connections to servers that sign each user in (docs/catalog.md#connections): never a token.
  routes.get("/connections", async (c) => {
    const owner = { kind: "user" as const, userId: c.get("user").userId };
    return c.json({ connections: (await connectionsStub(c.env, owner).list()).map(describeConnection) });
  });

  routes.delete("/connections", async (c) => {
    const owner = { kind: "user" as const, userId: c.get("user").userId };
    return c.json({ removed: await removeConnections(c.env, owner, c.req.query("server")) });
  });

  routes.get("/skills/:skill/threads", async (c) => {
    const skill = await existingSkill(c.env, c.req.param("skill"));
    const limit = limitParam(c.req.query("limit"));
    return c.json({ skill, threads: await sessionStub(c.env, skill, c.get("user").userId).threadList(limit) });
  });

  routes.delete("/skills/:skill/threads/:id", async (c) => {
    const skill = await existingSkill(c.env, c.req.param("skill"));
    const id = c.req.param("id");
    const parsed = threadIdSchema.safeParse(id);
    if (!parsed.success || !(await sessionStub(c.env, skill, c.get("user").userId).deleteThread(parsed.data)))
      throw new OwnEntryNotFoundError("thread", id.slice(0, 80), skill);
    return c.json({ deleted: { thread: parsed.data } });
  });

  routes.get("/skills/:skill/runs", async (c) => {
    const skill = await existingSkill(c.env, c.req.param("skill"));
    const limit = limitParam(c.req.query("limit"));
    return c.json({ skill, runs: await sessionStub(c.env, skill, c.get("user").userId).recentRuns(limit) });
  });

  routes.delete("/skills/:skill/runs/:id", async (c) => {
    const skill = await existingSkill(c.env, c.req.param("skill"));
    const id = c.req.param("id");
    const parsed = runIdSchema.safeParse(id);
    if (!parsed.success || !(await sessionStub(c.env, skill, c.get("user").userId).deleteRun(parsed.data)))
      throw new OwnEntryNotFoundError("run", id.slice(0, 80), skill);
    return c.json({ deleted: { run: parsed.data } });
  });

  routes.all("*", (c) =>
    c.json(
      { error: `No route ${c.req.method} ${new URL(c.req.url).pathname}.`, fix: "See the /me/api table in docs/operating.md#members-limits-and-retention." },
      404,
    ),
  );
  routes.onError((error, c) => {
    if (error instanceof AdminApiError) return c.json({ error: error.message, fix: error.fix }, error.status);
    log("error", "own data request failed", { path: new URL(c.req.url).pathname, error: String(error) });
    return c.json({ error: "The request failed unexpectedly; nothing more is known here.", fix: "Try again; if it persists, tell an admin." }, 500);
  });
  return routes;
}

function limitParam(value: string | undefined): number {
  const limit = limitSchema.safeParse(value);
  if (!limit.success) throw new InvalidParameterError("limit", "must be a whole number from 1 to 200", "Leave it out for the 50 most recent.");
  return limit.data;
}

/** A session of a skill that does not exist would be an empty Durable Object made for a typo. */
async function existingSkill(env: Env, name: string): Promise<string> {
  const skill = checkSkillName(name);
  if (!(await getSkill(env.DB, skill))) throw new SkillNotFoundError(skill);
  return skill;
}
