import {
  type AuthorizationServerMetadata,
  checkResourceAllowed,
  discoverOAuthServerInfo,
  exchangeAuthorization,
  extractWWWAuthenticateParams,
  type FetchLike,
  type OAuthClientInformationFull,
  refreshAuthorization,
  registerClient,
  startAuthorization,
} from "@modelcontextprotocol/client";
import { randomBytes } from "node:crypto";
import { approveInBrowser, boundedFetch } from "./oauth-consent-browser";

export { boundedFetch } from "./oauth-consent-browser";

export interface SignInOptions {
  /** The login to pick on the dev consent page (must be DEV_USER or in DEV_USERS); default: the page's default. */
  login?: string;
  /** The MCP endpoint whose 401 starts discovery (default `/mcp`). */
  mcpPath?: string;
  /**
   * Where the code is sent. Nothing listens there: the code is read from the Location header,
   * the way a native client's loopback listener would receive it (RFC 8252 §7.3).
   */
  redirectUri?: string;
  clientName?: string;
}

export interface OAuthSession {
  accessToken: string;
  refreshToken: string;
  clientId: string;
  /** The login that was picked (undefined: the dev provider's default). */
  login: string | undefined;
  /** The authorization server's metadata, as discovered from the 401. */
  metadata: AuthorizationServerMetadata;
  /** The RFC 8707 resource the tokens are bound to. */
  resource: string;
  /** Rotates the refresh token (the old one stops working) and updates this session's tokens. */
  refresh(): Promise<{ accessToken: string; refreshToken: string }>;
}

const DEFAULT_REDIRECT = "http://127.0.0.1:9/oauth/callback";

/**
 * Signs a user in against a running Worker the way an MCP client does (MCP authorization
 * spec): an unauthenticated request, discovery from the 401's `resource_metadata`, dynamic
 * client registration, /authorize with PKCE S256 and `resource`, the consent page (handle plus
 * its `__Host-` binding cookie), the dev identity provider's callback, the code from the
 * redirect, and the token exchange. The OAuth steps are the MCP SDK's own client functions;
 * only the browser's part is driven here.
 */
export async function signIn(baseUrl: string, options: SignInOptions = {}): Promise<OAuthSession> {
  const pending = await beginSignIn(baseUrl, options);
  const registered = new URL(pending.redirectUri);
  const redirect = await approveInBrowser(
    pending.authorizationUrl,
    options.login,
    (url) => url.origin === registered.origin && url.pathname === registered.pathname,
  );
  return pending.finish(redirect);
}

/** A client that has registered and built its authorization URL, waiting for the browser's part. */
export interface PendingSignIn {
  authorizationUrl: URL;
  redirectUri: string;
  clientId: string;
  /** The client's redirect (code, state, iss) → tokens, checked as the SDK's client checks them. */
  finish(redirect: URL): Promise<OAuthSession>;
}

/**
 * Everything of a client's sign-in before a person opens the authorization URL: the 401,
 * discovery, dynamic registration and PKCE. The browser's part is the caller's (a real browser
 * for consent-page tests); `finish` takes the redirect it ended at.
 */
export async function beginSignIn(baseUrl: string, options: SignInOptions = {}): Promise<PendingSignIn> {
  const fetchFn: FetchLike = boundedFetch;
  const mcpUrl = new URL(options.mcpPath ?? "/mcp", baseUrl);
  const redirectUri = options.redirectUri ?? DEFAULT_REDIRECT;
  const challenge = await fetchFn(mcpUrl, {
    method: "POST",
    headers: { "Content-Type": "application/json", Accept: "application/json, text/event-stream" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
  });
  await challenge.arrayBuffer();
  const { resourceMetadataUrl } = extractWWWAuthenticateParams(challenge);
  if (challenge.status !== 401 || !resourceMetadataUrl) {
    throw new Error(
      `${mcpUrl} answered ${challenge.status} without a resource_metadata challenge (WWW-Authenticate: ${challenge.headers.get("WWW-Authenticate")})`,
    );
  }

  const info = await discoverOAuthServerInfo(mcpUrl, { resourceMetadataUrl, fetchFn });
  const metadata = info.authorizationServerMetadata;
  const resource = info.resourceMetadata?.resource;
  if (!metadata || !resource) throw new Error(`discovery from ${resourceMetadataUrl} found no authorization server metadata or resource`);
  if (!checkResourceAllowed({ requestedResource: mcpUrl, configuredResource: resource })) {
    throw new Error(`the protected resource ${resource} does not cover ${mcpUrl}`);
  }
  const asUrl = info.authorizationServerUrl;

  const client: OAuthClientInformationFull = await registerClient(asUrl, {
    metadata,
    fetchFn,
    clientMetadata: {
      client_name: options.clientName ?? `slipsnisse-e2e${options.login ? `-${options.login}` : ""}`,
      redirect_uris: [redirectUri],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    },
  });

  const state = randomBytes(16).toString("base64url");
  const { authorizationUrl, codeVerifier } = await startAuthorization(asUrl, {
    metadata,
    clientInformation: client,
    redirectUrl: redirectUri,
    scope: "mcp",
    state,
    resource,
  });
  return {
    authorizationUrl,
    redirectUri,
    clientId: client.client_id,
    async finish(redirect: URL): Promise<OAuthSession> {
      if (redirect.searchParams.get("state") !== state) throw new Error("the redirect's state is not the one this client sent");
      const code = redirect.searchParams.get("code");
      if (!code)
        throw new Error(`the redirect carries no code: ${redirect.searchParams.get("error") ?? ""} ${redirect.searchParams.get("error_description") ?? ""}`);

      const tokens = await exchangeAuthorization(asUrl, {
        metadata,
        clientInformation: client,
        authorizationCode: code,
        iss: redirect.searchParams.get("iss") ?? undefined,
        codeVerifier,
        redirectUri,
        resource,
        fetchFn,
      });
      if (!tokens.refresh_token) throw new Error("the token response carries no refresh token");

      const session: OAuthSession = {
        accessToken: tokens.access_token,
        refreshToken: tokens.refresh_token,
        clientId: client.client_id,
        login: options.login,
        metadata,
        resource,
        async refresh() {
          const next = await refreshAuthorization(asUrl, { metadata, clientInformation: client, refreshToken: session.refreshToken, resource, fetchFn });
          if (!next.refresh_token || next.refresh_token === session.refreshToken) throw new Error("the refresh did not rotate the refresh token");
          session.accessToken = next.access_token;
          session.refreshToken = next.refresh_token;
          return { accessToken: session.accessToken, refreshToken: session.refreshToken };
        },
      };
      return session;
    },
  };
}

/**
 * Signs `login` in through the dev identity provider. The Worker must run with IDP=dev and list
 * the login (DEV_USER or DEV_USERS, e.g. `--var DEV_USERS:u01,u02,…`), on loopback.
 */
export function signInAs(baseUrl: string, login: string, options: Omit<SignInOptions, "login"> = {}): Promise<OAuthSession> {
  return signIn(baseUrl, { ...options, login });
}

/** `Authorization: Bearer …` for a connected client or a raw fetch. */
export function bearer(session: Pick<OAuthSession, "accessToken">): Record<string, string> {
  return { Authorization: `Bearer ${session.accessToken}` };
}
