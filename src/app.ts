import { Hono } from "hono";
import { recordSeen } from "./auth/member-directory";
import { signedInUser, type UserProps } from "./auth/user-props";
import { jsonBodiesOnly } from "./admin/json-content-type";
import { ownDataRoutes } from "./admin/own-data-routes";
import type { OAuthHelpersSource } from "./admin/routes/member-routes";
import { teamAdminRoutes } from "./admin/team-admin-routes";
import { log } from "./observability/logger";
import { adminRoutes } from "./admin/admin-routes";
import { connectRoutes } from "./dashboard/connect-routes";
import { dashboardRoutes } from "./dashboard/dashboard-routes";
import { DEMO_DOCS_PATH, serveDemoDocs } from "./demo/docs-server";
import { serveLegacySse, sseAccessRefusal } from "./mcp/legacy-sse/legacy-sse-routes";
import { serveMcp } from "./mcp/http/mcp-endpoint";

export type AppBindings = { Bindings: Env };

/**
 * The routes behind the auth layer (src/index.ts). API routes run only with a signed-in user in
 * `ctx.props`; the parse below is the last check, not the authentication.
 */
export function createApp(options: AppOptions = {}): Hono<AppBindings> {
  const app = new Hono<AppBindings>();
  app.get("/healthz", (c) => c.json({ ok: true }));
  app.all(DEMO_DOCS_PATH, (c) => serveDemoDocs(c.req.raw, c.env, c.executionCtx as ExecutionContext));
  app.use("/admin/api/*", jsonBodiesOnly());
  app.use("/me/api/*", jsonBodiesOnly());
  app.route("/admin/api", teamAdminRoutes(options.oauthHelpers));
  app.route("/admin/api", adminRoutes());
  app.route("/me/api", ownDataRoutes());
  app.route("/admin", dashboardRoutes(options.oauthHelpers));
  app.route("/connect", connectRoutes());

  const mcp = (request: Request, env: Env, ctx: ExecutionContext) => {
    const user = signedInUser(ctx.props);
    if (user === undefined) return unauthorized();
    markSeen(env, ctx, user);
    return serveMcp(request, env, user);
  };
  const sse = (request: Request, env: Env, ctx: ExecutionContext) => {
    const user = signedInUser(ctx.props);
    if (user === undefined) return unauthorized();
    markSeen(env, ctx, user);
    return sseAccessRefusal(request, env, user).then((refused) => refused ?? serveLegacySse(request, env, user));
  };
  app.all("/mcp", (c) => mcp(c.req.raw, c.env, c.executionCtx as ExecutionContext));
  app.all("/s/:skill/mcp", (c) => mcp(c.req.raw, c.env, c.executionCtx as ExecutionContext));
  for (const path of ["/sse", "/sse/message", "/s/:skill/sse", "/s/:skill/sse/message"]) {
    app.all(path, (c) => sse(c.req.raw, c.env, c.executionCtx as ExecutionContext));
  }
  return app;
}

export interface AppOptions {
  /** The OAuth provider's helpers (grants), for revoking a member's grants from the admin API. */
  oauthHelpers?: OAuthHelpersSource;
}

/** Members' last-seen time, off the response path and throttled per user (recordSeen). */
function markSeen(env: Env, ctx: ExecutionContext, user: UserProps): void {
  // Service clients are listed from their own table (src/auth/service-clients), not as members.
  if (user.idp === "service") return;
  const write = recordSeen(env.DB, user, Date.now());
  if (write !== null) ctx.waitUntil(write.catch((error: unknown) => log("warn", "member last-seen not recorded", { error: String(error) })));
}

function unauthorized(): Response {
  return Response.json({ error: "Sign-in required." }, { status: 401 });
}
