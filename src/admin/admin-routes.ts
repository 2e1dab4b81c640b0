import { Hono } from "hono";
import { InvalidCatalogError, SkillVersionNotFoundError } from "../catalog/catalog-errors";
import { log } from "../observability/logger";
import { requireAdmin } from "./admin-auth";
import type { AdminEnv } from "./admin-context";
import { AdminApiError } from "./admin-errors";
import { catalogRoutes } from "./routes/catalog-routes";
import { evalRoutes } from "./routes/eval-routes";
import { expertRoutes } from "./routes/expert-routes";
import { runIndexRoutes } from "./routes/run-index-routes";
import { runRoutes } from "./routes/run-routes";
import { serverRoutes } from "./routes/server-routes";
import { skillRoutes } from "./routes/skill-routes";
import { statusRoutes } from "./routes/status-routes";
import { toolChangeRoutes } from "./routes/tool-change-routes";
import { usageRoutes } from "./routes/usage-routes";
import { versionRoutes } from "./routes/version-routes";
import { whoamiRoutes } from "./routes/whoami-routes";

/**
 * The admin API, mounted at /admin/api. Every route needs the admin role (see admin-auth.ts).
 * Refusals are JSON `{error, fix, problems?}`: 400 invalid input (every problem by JSON path),
 * 404 missing, 409 duplicate or in use, 412 stale If-Match.
 */
export function adminRoutes(): Hono<AdminEnv> {
  const admin = new Hono<AdminEnv>();
  admin.use("*", requireAdmin());
  for (const routes of [
    catalogRoutes(),
    skillRoutes(),
    serverRoutes(),
    expertRoutes(),
    evalRoutes(),
    versionRoutes(),
    statusRoutes(),
    toolChangeRoutes(),
    runRoutes(),
    runIndexRoutes(),
    usageRoutes(),
    whoamiRoutes(),
  ]) {
    admin.route("/", routes);
  }
  // A mounted sub-app's notFound is not consulted by Hono; a last catch-all route is.
  admin.all("*", (c) =>
    c.json({ error: `No admin route ${c.req.method} ${new URL(c.req.url).pathname}.`, fix: "See the admin API table in docs/operating.md#admin-api." }, 404),
  );
  admin.onError((error, c) => {
    if (error instanceof AdminApiError) {
      return c.json({ error: error.message, fix: error.fix, ...(error.problems.length > 0 ? { problems: error.problems } : {}) }, error.status);
    }
    if (error instanceof SkillVersionNotFoundError) return c.json({ error: error.message, fix: error.fix }, 404);
    if (error instanceof InvalidCatalogError) return c.json({ error: error.message, fix: error.fix, problems: error.problems }, 400);
    log("error", "admin API request failed", { path: new URL(c.req.url).pathname, error: String(error) });
    return c.json(
      {
        error: "The admin API failed unexpectedly; nothing more is known here.",
        fix: "Try again; if it persists, look at the Worker's logs (npx wrangler tail).",
      },
      500,
    );
  });
  return admin;
}
