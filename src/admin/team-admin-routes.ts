import { Hono } from "hono";
import { log } from "../observability/logger";
import { requireAdmin } from "./admin-auth";
import type { AdminEnv } from "./admin-context";
import { AdminApiError } from "./admin-errors";
import { connectionRoutes } from "./routes/connection-routes";
import { limitRoutes } from "./routes/limit-routes";
import { memberRoutes, type OAuthHelpersSource } from "./routes/member-routes";
import { serviceClientRoutes } from "./routes/service-client-routes";

/**
 * Admin routes for members, service clients and limits, mounted at /admin/api before the rest of the admin API
 * (src/app.ts); admin-only like every admin route, with the same `{error, fix}` refusals. Each
 * path carries its own requireAdmin, so other admin paths are not checked twice.
 */
export function teamAdminRoutes(oauthHelpers: OAuthHelpersSource | undefined): Hono<AdminEnv> {
  const routes = new Hono<AdminEnv>();
  for (const path of ["/members", "/members/*", "/skills/:skill/limits", "/connections", "/connections/*", "/service-clients", "/service-clients/*"])
    routes.use(path, requireAdmin());
  routes.route("/", memberRoutes(oauthHelpers));
  routes.route("/", serviceClientRoutes());
  routes.route("/", connectionRoutes());
  routes.route("/", limitRoutes());
  routes.onError((error, c) => {
    if (error instanceof AdminApiError) return c.json({ error: error.message, fix: error.fix }, error.status);
    log("error", "admin API request failed", { path: new URL(c.req.url).pathname, error: String(error) });
    return c.json(
      {
        error: "The admin API failed unexpectedly; nothing more is known here.",
        fix: "Try again; if it persists, look at the Worker's logs (npx wrangler tail).",
      },
      500,
    );
  });
  return routes;
}
