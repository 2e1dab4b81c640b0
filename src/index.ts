import { createApp } from "./app";
import { ADMIN_API_PREFIX } from "./auth/admin-api-refusal";
import { adminTokenUser } from "./auth/admin-token";
import { createOAuthWorker } from "./auth/create-oauth-worker";
import { crossSiteRefusal } from "./auth/cross-site-request";
import { loopbackDevUser } from "./auth/loopback-dev-user";
import { dashboardDeepLink } from "./dashboard/dashboard-deep-links";
import { DEMO_DOCS_PATH } from "./demo/docs-server";
import { contextWithProps } from "./execution-context";
import { sweepRetention } from "./experts/session/retention-sweep";
import { mcpPreflight } from "./mcp/inbound/browser-origin";
import { SSE_PATH, sseAllow } from "./mcp/legacy-sse/legacy-sse-routes";
import { MCP_ALLOW, MCP_PATH } from "./mcp/http/mcp-endpoint";
import { guardedOutboundFetch } from "./downstream/guarded-fetch";
import { refuseDownstreamUrl } from "./downstream/url-guard";

export { UserConnections } from "./downstream/connections/user-connections";
export { LiveRunFeed } from "./experts/live/live-run-feed";
export { ExpertSession } from "./experts/session/expert-session";
export { SkillLimiter } from "./experts/limits/skill-limiter";
export { LegacySseSession } from "./mcp/legacy-sse/legacy-sse-session";

// The provider's helpers are read lazily, at request time, once `worker` below exists.
const app = createApp({ oauthHelpers: (env, origin) => worker.helpers(env, origin) });
const handler = { fetch: (request: Request, env: Env, ctx: ExecutionContext) => app.fetch(request, env, ctx) };

/**
 * OAuth in front of everything: /mcp, /s/<skill>/mcp, legacy SSE and the admin API need a
 * token; the app sees the signed-in user as `ctx.props`. Two ways around sign-in: the
 * ADMIN_TOKEN secret on admin API paths (automation), and `AUTH=none`, which only works in a
 * local environment on a loopback host (loopbackDevUser checks both), for tests and tools
 * that cannot do OAuth.
 */
const worker = createOAuthWorker({
  apiHandler: handler,
  defaultHandler: handler,
  // Client ID Metadata Documents through the SSRF-guarded fetch: public addresses only in a
  // deployed tenant, loopback too in local development (no compatibility flag needed).
  clientMetadataFetch: (env) => guardedOutboundFetch(refuseDownstreamUrl("client-metadata-document"), env),
});

/** Served without sign-in and independent of its configuration, so a misconfigured IdP still reports health. */
const PUBLIC_PATHS = new Set(["/healthz", DEMO_DOCS_PATH]);

export default {
  async fetch(request, env, ctx) {
    const url = new URL(request.url);
    const { pathname } = url;
    if (PUBLIC_PATHS.has(pathname)) return app.fetch(request, env, ctx);
    // A redirect only (the page it names checks the session), ahead of the provider, which would ask any /s/ path for a token.
    const deepLink = request.method === "GET" || request.method === "HEAD" ? dashboardDeepLink(url) : null;
    if (deepLink) return new Response(null, { status: 302, headers: { Location: deepLink, "Cache-Control": "no-store" } });
    // The OAuth provider would answer every preflight with success; these paths then refuse
    // origins outside ALLOWED_ORIGINS, so their preflight must refuse them too.
    if (request.method === "OPTIONS" && MCP_PATH.test(pathname)) return mcpPreflight(request, env, MCP_ALLOW);
    if (request.method === "OPTIONS" && SSE_PATH.test(pathname)) return mcpPreflight(request, env, sseAllow(pathname));
    // The token first: a change made with it is authored "admin-token" whether or not sign-in is on.
    // Only admin API paths take it (adminTokenUser checks again), so no other request waits on it.
    const tokenUser = pathname.startsWith(ADMIN_API_PREFIX) ? await adminTokenUser(request, env) : null;
    if (tokenUser) return app.fetch(request, env, contextWithProps(ctx, tokenUser));
    const loopbackUser = loopbackDevUser(request, env, url);
    // No credential is needed here, so a browser page on any site could act as the local admin.
    if (loopbackUser) return crossSiteRefusal(request) ?? app.fetch(request, env, contextWithProps(ctx, loopbackUser));
    return worker.fetch(request, env, ctx);
  },
  /** The cron trigger in wrangler.toml: D1 rows past their skill's retention (sessions expire by their own alarms). */
  async scheduled(controller, env, ctx) {
    ctx.waitUntil(sweepRetention(env.DB, controller.scheduledTime));
  },
} satisfies ExportedHandler<Env>;
