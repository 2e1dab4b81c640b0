import { getOAuthApi, type OAuthHelpers, OAuthProvider, type OAuthProviderOptions } from "@cloudflare/workers-oauth-provider";
import { type AuthConfig, type AuthVars, readAuthConfig } from "./auth-config";
import { createAuthApp, authPaths, grantedScopes } from "./auth-app";
import { AuthConfigError } from "./auth-errors";
import { withAdminApiRefusal } from "./admin-api-refusal";
import { type AuthenticatedApiHandler, guardApiHandler } from "./api-handler-guard";
import { assertDevAllowed } from "./identity/dev-identity-provider";
import type { UpstreamFetch } from "./identity/identity-provider";
import { selectIdentityProvider } from "./identity/select-identity-provider";
import { canonicalResourceRequest } from "./resource-indicator";
import { refreshMembershipCheck } from "./refresh-membership-check";
import { DevSignInRefusedError } from "./auth-errors";
import { messagePage } from "./auth-pages";
import { exchangeBurningFailedCodes, markCodeToBurn } from "./failed-code-burn";
import { judgeRegistration } from "./redirect-uri-policy";
import { invalidClientResponse, isPlausibleClientId, tokenRequestClientIds, unknownClientPage } from "./client-id-guard";
import { clientCredentialsToken, isClientCredentialsRequest, withGrantMetadata } from "./service-clients/client-credentials-grant";
import { type ClientMetadataFetch, ensureMetadataDocumentClient, isMetadataDocumentUrl } from "./cimd/client-metadata-document";
import { serviceTokenUser } from "./service-clients/service-client-store";
import { enterpriseAuthorization } from "./enterprise/id-jag-grant";
import { log } from "../observability/logger";

/** Everything under these prefixes needs a valid access token: the MCP surface, the admin API and a member's own data (docs/architecture.md#request-path). */
export const apiRoutes = ["/mcp", "/s/", "/sse", "/admin/api/", "/me/api/"];

export interface PlainHandler {
  fetch(request: Request, env: Env, ctx: ExecutionContext): Response | Promise<Response>;
}

export interface CreateOAuthWorkerOptions {
  /** The MCP surface and admin API; `ctx.props` is the signed-in user, the token is gone. */
  apiHandler: AuthenticatedApiHandler;
  /** Unauthenticated routes (health, dashboard shell) after the auth routes; 404 if absent. */
  defaultHandler?: PlainHandler;
  /** Vars that win over the Worker's env (tests, tools). */
  config?: AuthVars;
  /** Outbound fetch for the upstream identity provider (tests hand in a fake issuer). */
  upstreamFetch?: UpstreamFetch;
  /**
   * The fetch for Client ID Metadata Documents (cimd/client-metadata-document.ts): src/index.ts
   * hands in the guarded outbound fetch; without one, a URL client id is an unknown client.
   */
  clientMetadataFetch?: (env: Env) => ClientMetadataFetch;
}

interface Built {
  config: AuthConfig;
  provider: OAuthProvider<Env>;
  options: OAuthProviderOptions<Env>;
}

/**
 * The Worker's front door: workers-oauth-provider in its combined role (authorization server
 * plus this server as the one protected resource), the sign-in app on /authorize, and the API
 * handler behind it. The resource is the server's origin, so one audience covers /mcp, every
 * /s/<skill>/mcp, legacy SSE and the admin API (the provider requires each protected route to
 * descend from the resource). Config errors answer every request with a page naming the var.
 */
export function createOAuthWorker(options: CreateOAuthWorkerOptions) {
  const built = new Map<string, Built>();
  let lastConfig: AuthConfig | undefined;
  let lastEnv: Env | undefined;

  function configFor(env: Env): AuthConfig {
    if (env !== lastEnv || lastConfig === undefined) {
      lastConfig = readAuthConfig(env, options.config);
      lastEnv = env;
      built.clear();
    }
    return lastConfig;
  }

  function builtFor(config: AuthConfig, origin: string): Built {
    const cached = built.get(origin);
    if (cached && cached.config === config) return cached;
    const providerOpts = providerOptions(config, origin, options);
    const fresh = { config, options: providerOpts, provider: new OAuthProvider<Env>(providerOpts) };
    built.set(origin, fresh);
    return fresh;
  }

  async function front(request: Request, env: Env, ctx: ExecutionContext): Promise<Response> {
    let config: AuthConfig;
    try {
      config = configFor(env);
    } catch (error) {
      if (error instanceof AuthConfigError) return refusal(request, 500, "server_error", "Slipsnisse is misconfigured", error.toolMessage);
      throw error;
    }
    const url = new URL(request.url);
    if (config.idp.IDP === "dev") {
      try {
        assertDevAllowed(config, url.hostname);
      } catch (error) {
        if (error instanceof DevSignInRefusedError) {
          return refusal(request, error.status, error.status === 500 ? "server_error" : "access_denied", "Dev sign-in refused", error.toolMessage);
        }
        throw error;
      }
    }
    const origin = config.PUBLIC_URL ?? url.origin;
    if (url.searchParams.has("access_token") && apiRoutes.some((route) => url.pathname.startsWith(route.replace(/\/$/, "")))) {
      return queryTokenRefused(origin);
    }
    const { provider, options: providerOpts } = builtFor(config, origin);
    // The provider caches its helpers on env (env.OAUTH_PROVIDER); a per-request copy keeps
    // one origin's helpers from leaking into another's requests.
    const serve = (forward: Request) => provider.fetch(forward, { ...env }, ctx);
    const canonical = await canonicalResourceRequest(request, origin);
    if (request.method === "POST" && url.pathname === "/token") {
      const clientIds = await tokenRequestClientIds(canonical);
      if (clientIds.some((clientId) => !isPlausibleClientId(clientId))) return invalidClientResponse();
      for (const id of clientIds) if (!(await metadataDocumentReady(id, env))) return invalidClientResponse();
      // The provider has no client credentials grant; service clients get theirs here (SEP-1046).
      if (await isClientCredentialsRequest(canonical)) {
        return clientCredentialsToken(canonical, { db: env.DB, origin, scopes: grantedScopes, ttlSeconds: config.ACCESS_TOKEN_TTL, now: Date.now() });
      }
      return exchangeBurningFailedCodes(canonical, serve, () => getOAuthApi(providerOpts, env));
    }
    if (request.method === "POST" && url.pathname === "/register") {
      const judged = await judgeRegistration(canonical);
      return judged instanceof Response ? judged : serve(judged);
    }
    const clientId = url.pathname === "/authorize" ? url.searchParams.get("client_id") : null;
    if (clientId !== null && !isPlausibleClientId(clientId)) return unknownClientPage();
    if (clientId !== null && !(await metadataDocumentReady(clientId, env))) return unknownClientPage();
    if (request.method === "GET" && url.pathname === "/.well-known/oauth-authorization-server") {
      return withGrantMetadata(await serve(canonical), options.clientMetadataFetch ? { client_id_metadata_document_supported: true } : {});
    }
    return withAdminApiRefusal(request, await serve(canonical), env);
  }

  /**
   * A CIMD URL client id is registered from its document before the provider looks it up; false
   * when it names a document that cannot be used (logged; the client gets the unknown client's
   * answer). Any other id passes as it is.
   */
  async function metadataDocumentReady(clientId: string, env: Env): Promise<boolean> {
    if (!options.clientMetadataFetch || !isMetadataDocumentUrl(clientId)) return true;
    const problem = await ensureMetadataDocumentClient(env.OAUTH_KV, clientId, options.clientMetadataFetch(env), Date.now());
    if (problem === undefined) return true;
    log("warn", "client metadata document refused", { clientId: clientId.slice(0, 255), problem });
    return false;
  }

  return {
    /**
     * Whatever throws below answers without its message or stack: wrangler dev renders an
     * uncaught error's stack into the response, and a client's input must never learn our
     * internals (issue 35). The error itself goes to the log.
     */
    async fetch(request: Request, env: Env, ctx: ExecutionContext): Promise<Response> {
      try {
        return await front(request, env, ctx);
      } catch (error) {
        const path = new URL(request.url).pathname;
        log("error", "request failed before the app answered", { path, error: error instanceof Error ? `${error.name}: ${error.message}` : String(error) });
        return refusal(
          request,
          500,
          "server_error",
          "Something went wrong",
          "The request failed on the server; try again. Its operator finds the cause in the Worker's logs.",
        );
      }
    },
    /**
     * The provider's helpers (list/revoke grants, clients) for code outside a request to an
     * auth route, such as the admin API or a cron job; `origin` as in PUBLIC_URL.
     * Throws AuthConfigError when the config is broken.
     */
    helpers(env: Env, origin: string): OAuthHelpers {
      const config = configFor(env);
      return getOAuthApi(builtFor(config, config.PUBLIC_URL ?? origin).options, env);
    },
  } satisfies ExportedHandler<Env> & { helpers(env: Env, origin: string): OAuthHelpers };
}

function providerOptions(config: AuthConfig, origin: string, options: CreateOAuthWorkerOptions): OAuthProviderOptions<Env> {
  const idp = selectIdentityProvider(config, options.upstreamFetch ?? ((input, init) => fetch(input, init)));
  const metadataUrl = `${origin}/.well-known/oauth-protected-resource`;
  const enterprise = enterpriseAuthorization(config, grantedScopes);
  const providerOpts: OAuthProviderOptions<Env> = {
    apiRoute: apiRoutes,
    apiHandler: guardApiHandler(options.apiHandler, () => metadataUrl),
    defaultHandler: {
      fetch(request, env, ctx) {
        const path = new URL(request.url).pathname;
        if (authPaths.some((authPath) => authPath === path)) return authApp.fetch(request, env, ctx);
        if (options.defaultHandler) return options.defaultHandler.fetch(request, env, ctx);
        return new Response("Not found", { status: 404 });
      },
    },
    authorizeEndpoint: `${origin}/authorize`,
    tokenEndpoint: `${origin}/token`,
    clientRegistrationEndpoint: `${origin}/register`,
    scopesSupported: grantedScopes,
    resourceMetadata: {
      resource: origin,
      authorization_servers: [origin],
      bearer_methods_supported: ["header"],
      resource_name: "Slipsnisse",
    },
    accessTokenTTL: config.ACCESS_TOKEN_TTL,
    refreshTokenTTL: config.REFRESH_TOKEN_TTL,
    clientRegistrationTTL: config.CLIENT_REGISTRATION_TTL,
    // Off: the provider's CIMD fetches with the global fetch and needs global_fetch_strictly_public.
    // Ours registers a URL client id from its document first (metadataDocumentReady), through the
    // guarded outbound fetch, and the provider then finds it in KV like any registered client.
    clientIdMetadataDocumentEnabled: false,
    tokenExchangeCallback: refreshMembershipCheck(config, idp),
    // ID-JAGs of the tenant's enterprise IdP, when it trusts one (ENTERPRISE_IDP_ISSUER).
    ...(enterprise === undefined ? {} : { enterpriseManagedAuthorization: enterprise }),
    // Bearer tokens the provider did not issue: a service client's (client-credentials-grant.ts),
    // looked up in D1 on every request so a revocation holds from the next one.
    resolveExternalToken: async ({ token, env }) => {
      const user = await serviceTokenUser(env.DB, token, Date.now());
      return user === null ? null : { props: user, audience: origin };
    },
    onError: markCodeToBurn,
    // Native apps (Cursor) receive the code through their own URI scheme (RFC 8252 §7.1);
    // judgeRegistration and the /authorize handler keep the schemes a browser handles itself out.
    allowPrivateUseRedirectUris: true,
  };
  const authApp = createAuthApp({ config, origin, idp, oauth: (env) => getOAuthApi(providerOpts, env) });
  return providerOpts;
}

/**
 * The endpoints that clients, not people, read: OAuth clients parse /register, /token and the
 * discovery documents as JSON (RFC 6749 §5.2, RFC 7591 §3.2.2), and so do MCP clients on the
 * API routes. An HTML page there reaches the user as a parse error at best.
 */
function answersJson(path: string): boolean {
  return path === "/token" || path === "/register" || path.startsWith("/.well-known/") || apiRoutes.some((route) => path.startsWith(route.replace(/\/$/, "")));
}

/** A refusal before the provider runs: `{error, error_description}` for clients, a plain page for a browser. */
function refusal(request: Request, status: number, code: string, title: string, message: string): Response {
  if (!answersJson(new URL(request.url).pathname)) return messagePage(status, title, message);
  return new Response(JSON.stringify({ error: code, error_description: `${title}: ${message}` }), {
    status,
    headers: { "Content-Type": "application/json", "Cache-Control": "no-store" },
  });
}

/** OAuth 2.1 §5.2 / RFC 9700: bearer tokens in URLs leak into logs and referrers; never accept them. */
function queryTokenRefused(origin: string): Response {
  return new Response(
    JSON.stringify({ error: "invalid_request", error_description: "Access tokens in the query string are not accepted; send Authorization: Bearer <token>." }),
    {
      status: 400,
      headers: {
        "Content-Type": "application/json",
        "WWW-Authenticate": `Bearer error="invalid_request", resource_metadata="${origin}/.well-known/oauth-protected-resource"`,
      },
    },
  );
}
