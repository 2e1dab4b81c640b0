import { authenticateServiceClient, issueServiceToken } from "./service-client-store";

/** The grant this module serves at /token (RFC 6749 §4.4, MCP SEP-1046). */
export const CLIENT_CREDENTIALS = "client_credentials";

/** Whether a /token request asks for the client credentials grant (a form POST). */
export async function isClientCredentialsRequest(request: Request): Promise<boolean> {
  if (!(request.headers.get("content-type") ?? "").toLowerCase().includes("application/x-www-form-urlencoded")) return false;
  return new URLSearchParams(await request.clone().text()).get("grant_type") === CLIENT_CREDENTIALS;
}

export interface ClientCredentialsOptions {
  db: D1Database;
  /** The resource every token is for: the server's origin (resource-indicator.ts). */
  origin: string;
  scopes: readonly string[];
  ttlSeconds: number;
  now: number;
}

/**
 * The token endpoint for service clients: the client authenticates with `client_secret_basic`
 * or `client_secret_post` (one of them, RFC 6749 §2.3), gets a bearer token for this server's
 * resource and no refresh token (RFC 6749 §4.4.3: the client can always ask again). Every
 * failure is a standard OAuth error as JSON; an unknown id, a wrong secret and a revoked client
 * read alike.
 */
export async function clientCredentialsToken(request: Request, options: ClientCredentialsOptions): Promise<Response> {
  const form = new URLSearchParams(await request.clone().text());
  const basic = basicCredentials(request.headers.get("authorization"));
  const posted = form.get("client_secret");
  if (basic === "malformed") return oauthError(401, "invalid_client", "The Basic credentials are malformed: send base64(client_id:client_secret).", true);
  if (basic !== null && posted !== null) {
    return oauthError(400, "invalid_request", "Send the client secret one way only: the Authorization header or the form, not both (RFC 6749 §2.3).");
  }
  const credentials = basic ?? (posted === null ? null : { id: form.get("client_id") ?? "", secret: posted });
  if (credentials === null) {
    return oauthError(
      401,
      "invalid_client",
      "The client credentials grant needs a service client's id and secret (client_secret_basic or client_secret_post).",
      true,
    );
  }
  if (basic !== null && form.has("client_id") && form.get("client_id") !== basic.id) {
    return oauthError(400, "invalid_request", "client_id in the form differs from the one in the Authorization header.");
  }
  const resource = form.get("resource");
  if (resource !== null && resource !== options.origin) {
    return oauthError(400, "invalid_target", `This server issues tokens for ${options.origin} only; resource names another.`);
  }
  const requested = (form.get("scope") ?? "").split(" ").filter((scope) => scope !== "");
  const unknown = requested.filter((scope) => !options.scopes.includes(scope));
  if (unknown.length > 0) return oauthError(400, "invalid_scope", `Unknown scope ${unknown.join(", ")}; this server grants ${options.scopes.join(" ")}.`);
  const client = await authenticateServiceClient(options.db, credentials.id, credentials.secret);
  if (client === null) {
    return oauthError(
      401,
      "invalid_client",
      "Unknown client, wrong secret or revoked client: ask an admin for a service client (docs/operating.md).",
      basic !== null,
    );
  }
  const token = await issueServiceToken(options.db, client.clientId, options.ttlSeconds, options.now);
  return new Response(JSON.stringify({ access_token: token, token_type: "Bearer", expires_in: options.ttlSeconds, scope: options.scopes.join(" ") }), {
    status: 200,
    headers: { "Content-Type": "application/json", "Cache-Control": "no-store", Pragma: "no-cache" },
  });
}

function basicCredentials(header: string | null): { id: string; secret: string } | "malformed" | null {
  const encoded = /^basic[ \t]+(\S+)\s*$/i.exec(header ?? "")?.[1];
  if (encoded === undefined) return null;
  try {
    const decoded = atob(encoded);
    const colon = decoded.indexOf(":");
    if (colon < 0) return "malformed";
    // RFC 6749 §2.3.1: both parts are form-urlencoded before they are joined.
    const part = (text: string) => decodeURIComponent(text.replace(/\+/g, " "));
    return { id: part(decoded.slice(0, colon)), secret: part(decoded.slice(colon + 1)) };
  } catch {
    return "malformed";
  }
}

function oauthError(status: number, error: string, description: string, basicChallenge = false): Response {
  const headers: Record<string, string> = { "Content-Type": "application/json", "Cache-Control": "no-store" };
  // RFC 6749 §5.2: a 401 to a client that tried the Authorization header names the scheme.
  if (status === 401 && basicChallenge) headers["WWW-Authenticate"] = 'Basic realm="token"';
  return new Response(JSON.stringify({ error, error_description: description }), { status, headers });
}

/**
 * RFC 8414 metadata as the provider writes it, plus what it does not know we serve: the client
 * credentials grant and its auth methods (clients and the SDK's client credentials provider read
 * them here) and `extra` fields (CIMD support).
 */
export async function withGrantMetadata(response: Response, extra: Record<string, unknown>): Promise<Response> {
  if (!response.ok || !(response.headers.get("content-type") ?? "").includes("json")) return response;
  const metadata: unknown = await response.clone().json();
  if (typeof metadata !== "object" || metadata === null) return response;
  const listed = (name: string): string[] => {
    const value: unknown = Reflect.get(metadata, name);
    return Array.isArray(value) ? value.filter((item): item is string => typeof item === "string") : [];
  };
  const grants = listed("grant_types_supported");
  const methods = listed("token_endpoint_auth_methods_supported");
  const amended = {
    ...metadata,
    grant_types_supported: grants.includes(CLIENT_CREDENTIALS) ? grants : [...grants, CLIENT_CREDENTIALS],
    token_endpoint_auth_methods_supported: [...new Set([...methods, "client_secret_basic", "client_secret_post"])],
    ...extra,
  };
  const headers = new Headers(response.headers);
  headers.delete("content-length");
  return new Response(JSON.stringify(amended), { status: response.status, headers });
}
