import { Hono } from "hono";
import type { AdminEnv } from "../admin-context";

/**
 * Who the admin API takes the caller to be. The userId is the id run records and `?user=` use:
 * `<idp>-<subject>` after an OAuth sign-in (dev-alice, github-<numeric id>), `local:dev` under
 * AUTH=none, `admin-token` for the ADMIN_TOKEN (which has no runs: it never opens MCP).
 */
export function whoamiRoutes(): Hono<AdminEnv> {
  const routes = new Hono<AdminEnv>();
  routes.get("/whoami", (c) => {
    const { userId, login, role, idp } = c.get("admin");
    return c.json({ userId, login, role, idp: idp ?? null });
  });
  return routes;
}
