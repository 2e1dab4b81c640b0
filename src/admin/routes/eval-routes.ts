import { Hono } from "hono";
import { problemsFromIssue } from "../../catalog/checks/zod-issue-problems";
import { readJsonBody, skillParam, type AdminEnv } from "../admin-context";
import { EntryNotFoundError, InvalidBodyError, SkillNotFoundError } from "../admin-errors";
import { loadSkill } from "../../catalog/compiled-skill-cache";
import { NoEvalsError } from "../evals/eval-errors";
import { saveEvalReport } from "../evals/eval-reports";
import { evalRunBodySchema, runExpertEvals } from "../evals/eval-runner";
import { log } from "../../observability/logger";

/**
 * Runs an expert's catalog evals through the real session path and answers with the results per
 * model. Body (all optional): {models: ["provider:model"…], evals: [names], max_cost, concurrency}.
 */
export function evalRoutes(): Hono<AdminEnv> {
  const routes = new Hono<AdminEnv>();

  routes.post("/skills/:skill/experts/:expert/evals/run", async (c) => {
    const skill = skillParam(c);
    const name = c.req.param("expert");
    // Hono keeps the body it read, so readJsonBody reads the same text again.
    const text = await c.req.text();
    const raw = text.trim() === "" ? {} : await readJsonBody(c);
    const body = evalRunBodySchema.safeParse(raw);
    if (!body.success) throw new InvalidBodyError(body.error.issues.flatMap((issue) => problemsFromIssue(issue, evalRunBodySchema, raw)));
    // The compiled skill the session itself loads (KV, memoised), so the report names the version
    // the runs used; D1 may already hold a newer one the cache has not caught up with.
    const live = await loadSkill(c.env, skill);
    if (!live) throw new SkillNotFoundError(skill);
    const expert = live.config.experts.find((candidate) => candidate.name === name);
    if (!expert) throw new EntryNotFoundError(skill, "expert", name);
    if (!expert.evals || expert.evals.length === 0) throw new NoEvalsError(skill, name);
    const origin = new URL(c.req.url).origin;
    const report = await runExpertEvals(c.env, { skill, version: live.version, config: live.config, expert, origin }, body.data);
    // For the dashboard's evals page, written after the answer (KV is eventually consistent
    // anyway: another location sees it up to a minute later); a failed write loses the page's
    // copy, never the answer.
    c.executionCtx.waitUntil(
      saveEvalReport(c.env, report).catch((error: unknown) => log("warn", "eval report not kept", { skill, expert: name, error: String(error) })),
    );
    return c.json(report);
  });

  return routes;
}
