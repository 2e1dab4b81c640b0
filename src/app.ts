import { Hono } from "hono";
import { userPropsSchema } from "./auth/user-props";
import { adminRoutes } from "./admin/admin-routes";
import { dashboardRoutes } from "./dashboard/dashboard-routes";
import { DEMO_DOCS_PATH, serveDemoDocs } from "./demo/docs-server";
import { serveLegacySse } from "./mcp/legacy-sse/legacy-sse-routes";
import { serveMcp } from "./mcp/mcp-endpoint";

export type AppBindings = { Bindings: Env };

/**
 * The routes behind the auth layer (src/index.ts). API routes run only with a signed-in user in
 * `ctx.props`; the parse below is the last check, not the authentication.
 */
export function createApp(): Hono<AppBindings> {
  const app = new Hono<AppBindings>();
  app.get("/healthz", (c) => c.json({ ok: true }));
  app.all(DEMO_DOCS_PATH, (c) => serveDemoDocs(c.req.raw, c.env, c.executionCtx as ExecutionContext));
  app.route("/admin/api", adminRoutes());
  app.route("/admin", dashboardRoutes());

  const signedIn = (props: unknown) => userPropsSchema.safeParse(props);
  const mcp = (request: Request, env: Env, ctx: ExecutionContext) => {
    const user = signedIn(ctx.props);
    return user.success ? serveMcp(request, env, ctx, user.data) : unauthorized();
  };
  const sse = (request: Request, env: Env, ctx: ExecutionContext) => {
    const user = signedIn(ctx.props);
    return user.success ? serveLegacySse(request, env, user.data) : unauthorized();
  };
  app.all("/mcp", (c) => mcp(c.req.raw, c.env, c.executionCtx as ExecutionContext));
  app.all("/s/:skill/mcp", (c) => mcp(c.req.raw, c.env, c.executionCtx as ExecutionContext));
  for (const path of ["/sse", "/sse/message", "/s/:skill/sse", "/s/:skill/sse/message"]) {
    app.all(path, (c) => sse(c.req.raw, c.env, c.executionCtx as ExecutionContext));
  }
  return app;
}

function unauthorized(): Response {
  return Response.json({ error: "Sign-in required." }, { status: 401 });
}
