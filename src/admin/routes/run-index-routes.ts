import { Hono } from "hono";
import { z } from "zod";
import { sessionName, sessionStub } from "../../experts/session/session-name";
import type { AdminEnv } from "../admin-context";
import { InvalidParameterError, RunNotIndexedError } from "../admin-errors";
import { parseQuery } from "../admin-query";
import { indexedRun, listIndexedRuns, RUN_FILTER_FIXES, runFilterSchema, type RunSummary } from "../run-index-query";

const runIdSchema = z.uuid();

/**
 * The tenant's run index (D1 run_index): every finished run across users and skills, filtered
 * and paged; one run opens its full trace from the user's ExpertSession the row names.
 */
export function runIndexRoutes(): Hono<AdminEnv> {
  const routes = new Hono<AdminEnv>();

  routes.get("/runs", async (c) => {
    const filter = parseQuery(c, runFilterSchema, RUN_FILTER_FIXES);
    return c.json(await listIndexedRuns(c.env.DB, filter));
  });

  routes.get("/runs/:runId", async (c) => {
    const runId = runIdSchema.safeParse(c.req.param("runId"));
    if (!runId.success) throw new InvalidParameterError("run id", "is not a run id (a UUID)", "List runs with GET /admin/api/runs and use a run's id.");
    const summary = await indexedRun(c.env.DB, runId.data);
    if (!summary) throw new RunNotIndexedError(runId.data);
    return c.json(await runTrace(c.env, summary));
  });

  return routes;
}

/** A run's full trace: its index row, the session that holds it, the run record and its steps. */
export async function runTrace(env: Env, summary: RunSummary): Promise<Record<string, unknown>> {
  const stub = sessionStub(env, summary.skill, summary.user.id);
  const [run, steps] = await Promise.all([stub.run(summary.id), stub.steps(summary.id)]);
  return { summary, session: sessionName(env.TENANT, summary.skill, summary.user.id), run, steps };
}
