import type { DownstreamServerConfig } from "../../catalog/catalog-schema";

/**
 * What a connection is to: a catalog server that declares `auth`, as it crosses Durable Object
 * RPC (plain data). Connections are keyed by the server's URL, not its catalog id, so one
 * connection serves every skill that names the same server, and a token is only ever sent to
 * the URL it was issued for.
 */
export interface ConnectionTarget {
  serverId: string;
  skill: string;
  url: string;
  connection: "user" | "team";
  scopes?: string[];
  clientIdSecret?: string;
  clientSecretSecret?: string;
  /** The issuer the pre-registered client belongs to (auth.issuer); its credentials go to no other (issuer-pin.ts). */
  issuer?: string;
  /** A token endpoint outside the issuer's origin that the pre-registered client may still use (auth.token_endpoint). */
  tokenEndpoint?: string;
  /** The team's token is fetched by Slipsnisse itself with the client's credentials (no sign-in). */
  grant?: "client_credentials";
}

/** Whose connection: a member's own, or the team's one account (auth.connection "team"). */
export type ConnectionOwner = { kind: "user"; userId: string } | { kind: "team" };

export function connectionTarget(skill: string, serverId: string, config: DownstreamServerConfig): ConnectionTarget | undefined {
  const auth = config.auth;
  if (auth === undefined || config.url === undefined) return undefined;
  return {
    serverId,
    skill,
    url: config.url,
    connection: auth.connection,
    ...(auth.scopes === undefined ? {} : { scopes: auth.scopes }),
    ...(auth.client_id_secret === undefined ? {} : { clientIdSecret: auth.client_id_secret }),
    ...(auth.client_secret_secret === undefined ? {} : { clientSecretSecret: auth.client_secret_secret }),
    ...(auth.issuer === undefined ? {} : { issuer: auth.issuer }),
    ...(auth.token_endpoint === undefined ? {} : { tokenEndpoint: auth.token_endpoint }),
    ...(auth.grant === "client_credentials" ? { grant: "client_credentials" as const } : {}),
  };
}

/** The key a connection is stored under: the server's URL, normalised. */
export function serverKey(url: string): string {
  return new URL(url).href;
}

export function ownerFor(target: Pick<ConnectionTarget, "connection">, userId: string): ConnectionOwner {
  return target.connection === "team" ? { kind: "team" } : { kind: "user", userId };
}

/**
 * The account a connection acts as, as a cache key part: `team`, or `user:<userId>` (URI-encoded,
 * so no user id can read as the team's or another member's).
 */
export function connectionAccountKey(owner: ConnectionOwner): string {
  return owner.kind === "team" ? "team" : `user:${encodeURIComponent(owner.userId)}`;
}

/** The Durable Object name of an owner's connections; parts URI-encoded so no user id can forge another's. */
export function connectionsName(tenant: string, owner: ConnectionOwner): string {
  return owner.kind === "team" ? `${encodeURIComponent(tenant)}:team` : `${encodeURIComponent(tenant)}:user:${encodeURIComponent(owner.userId)}`;
}

/** Typed through the binding, not the class: the Durable Object imports this module, so naming its class here would close a circle. */
export function connectionsStub(env: Env, owner: ConnectionOwner): ReturnType<Env["USER_CONNECTIONS"]["get"]> {
  return env.USER_CONNECTIONS.get(env.USER_CONNECTIONS.idFromName(connectionsName(env.TENANT, owner)));
}

/** Where the downstream's authorization server sends the browser back. */
export const CONNECT_CALLBACK_PATH = "/connect/callback";
export const CONNECT_PATH = "/connect";
/** Slipsnisse's own Client ID Metadata Document, the client id at servers that accept one. */
export const CLIENT_METADATA_PATH = "/connect/client-metadata.json";

/** The document at CLIENT_METADATA_PATH for `origin` (its URL is the client id). */
export function clientMetadataDocument(origin: string): Record<string, unknown> {
  return {
    client_id: `${origin}${CLIENT_METADATA_PATH}`,
    client_name: "Slipsnisse",
    client_uri: origin,
    redirect_uris: [`${origin}${CONNECT_CALLBACK_PATH}`],
    grant_types: ["authorization_code", "refresh_token"],
    response_types: ["code"],
    token_endpoint_auth_method: "none",
  };
}
