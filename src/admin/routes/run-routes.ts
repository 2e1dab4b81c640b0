import { Hono } from "hono";
import { z } from "zod";
import { getSkill } from "../../catalog/catalog-store";
import { sessionStub } from "../../experts/session/session-name";
import { skillParam, type AdminContext, type AdminEnv } from "../admin-context";
import { InvalidParameterError, RunNotFoundError, RunNotIndexedError, SkillNotFoundError } from "../admin-errors";
import { parseQuery } from "../admin-query";
import { indexedRun, listIndexedRuns, RUN_FILTER_FIXES, runFilterSchema } from "../run-index-query";
import { runTrace } from "./run-index-routes";

const userSchema = z.string().trim().min(1).max(200);
const limitSchema = z.coerce.number().int().min(1).max(200).default(20);
// Run ids are minted by the Worker as UUIDs; anything else cannot name a run.
const runIdSchema = z.uuid();

/**
 * A user's recorded runs in one skill, read from that user's ExpertSession (tenant:skill:user),
 * where runs are written even when the client disconnected mid-run.
 */
export function runRoutes(): Hono<AdminEnv> {
  const routes = new Hono<AdminEnv>();

  routes.get("/skills/:skill/runs", async (c) => {
    const { skill, user } = await sessionParams(c);
    // Without ?user= the skill's runs across users come from the tenant's run index.
    if (user === undefined) return c.json({ skill, ...(await listIndexedRuns(c.env.DB, { ...parseQuery(c, runFilterSchema, RUN_FILTER_FIXES), skill })) });
    const limit = limitSchema.safeParse(c.req.query("limit"));
    if (!limit.success) throw new InvalidParameterError("limit", "must be a whole number from 1 to 200", "Leave it out for the 20 most recent runs.");
    const runs = await sessionStub(c.env, skill, user).recentRuns(limit.data);
    return c.json({ skill, user, runs });
  });

  routes.get("/skills/:skill/runs/:runId", async (c) => {
    const { skill, user } = await sessionParams(c);
    const runId = runIdSchema.safeParse(c.req.param("runId"));
    if (!runId.success)
      throw new InvalidParameterError("run id", "is not a run id (a UUID)", `List the user's runs with GET /admin/api/skills/${skill}/runs?user=<user id>.`);
    if (user === undefined) {
      const summary = await indexedRun(c.env.DB, runId.data);
      if (!summary || summary.skill !== skill) throw new RunNotIndexedError(runId.data);
      return c.json(await runTrace(c.env, summary));
    }
    const stub = sessionStub(c.env, skill, user);
    const run = await stub.run(runId.data);
    if (!run) throw new RunNotFoundError(skill, user, runId.data);
    return c.json({ run, steps: await stub.steps(runId.data) });
  });

  return routes;
}

async function sessionParams(c: AdminContext): Promise<{ skill: string; user: string | undefined }> {
  const skill = skillParam(c);
  const user = userSchema.optional().safeParse(c.req.query("user") || undefined);
  if (!user.success) {
    throw new InvalidParameterError(
      "user",
      "query parameter must be a user id of 1-200 characters",
      "Leave it out for every user's runs, or give a user id: <idp>-<subject> after sign-in (dev-alice, github-<numeric GitHub id>), local:dev under `npm start -- --no-auth`; GET /admin/api/whoami shows your own.",
    );
  }
  // Reading a session of a skill that does not exist would create an empty Durable Object for a typo.
  if (!(await getSkill(c.env.DB, skill))) throw new SkillNotFoundError(skill);
  return { skill, user: user.data };
}
