import { Hono } from "hono";
import { loopbackDevUser } from "./auth/loopback-dev-user";
import { DEMO_DOCS_PATH, serveDemoDocs } from "./demo/docs-server";
import { adminRoutes } from "./admin/admin-routes";
import { serveLegacySse } from "./mcp/legacy-sse/legacy-sse-routes";
import { serveMcp } from "./mcp/mcp-endpoint";

export type AppBindings = { Bindings: Env };

export function createApp(): Hono<AppBindings> {
  const app = new Hono<AppBindings>();
  app.get("/healthz", (c) => c.json({ ok: true }));
  app.all(DEMO_DOCS_PATH, (c) => serveDemoDocs(c.req.raw, c.env, c.executionCtx as ExecutionContext));
  app.route("/admin/api", adminRoutes());
  app.all("/mcp", (c) => mcpWithDevUser(c.req.raw, c.env, c.executionCtx as ExecutionContext));
  app.all("/s/:skill/mcp", (c) => mcpWithDevUser(c.req.raw, c.env, c.executionCtx as ExecutionContext));
  app.all("/sse/*", (c) => sseWithDevUser(c.req.raw, c.env));
  app.all("/sse", (c) => sseWithDevUser(c.req.raw, c.env));
  app.all("/s/:skill/sse/*", (c) => sseWithDevUser(c.req.raw, c.env));
  app.all("/s/:skill/sse", (c) => sseWithDevUser(c.req.raw, c.env));
  return app;
}

function mcpWithDevUser(request: Request, env: Env, ctx: ExecutionContext): Promise<Response> | Response {
  const user = loopbackDevUser(request, env);
  if (!user) return new Response("Unauthorized", { status: 401 });
  return serveMcp(request, env, ctx, user);
}

function sseWithDevUser(request: Request, env: Env): Promise<Response> | Response {
  const user = loopbackDevUser(request, env);
  if (!user) return new Response("Unauthorized", { status: 401 });
  return serveLegacySse(request, env, user);
}
