import { z } from "zod";

/**
 * The UserConnections object's SQLite tables (one object per tenant and member, plus one for the
 * team's connections). Listed in src/storage-keys.ts. Every secret column holds an AES-GCM
 * ciphertext (token-cipher.ts) bound to the owner and server; the rest is what the member's
 * Connections page shows (server, skill, scopes, times), never a token.
 *
 * connections   server_key (the server's URL) → server id and skill it was connected through,
 *               granted scope, sealed tokens, sealed client information the tokens belong to
 *               (client id, and secret if any, needed to refresh), the discovery state (public
 *               metadata, JSON), expiry, connected/refreshed times, who connected (a login, or
 *               "client credentials" for a team token Slipsnisse fetched itself).
 * connect_flows a sign-in in progress: random id (in the connect link), the target (JSON), the
 *               OAuth `state` sent to the authorization server, the sealed PKCE verifier and
 *               client information, discovery state, the authorization URL, who asked, created/
 *               expires/completed times. Deleted 15 minutes after it expires.
 * token_holders which ExpertSessions (Durable Object id, hex) were handed a server's token and
 *               may still hold it in memory (until: hand-out + TOKEN_MEMO_MS): a removal tells
 *               them to forget it. Rows past `until` are deleted when the next one is written.
 * connection_migrations which of CONNECTION_MIGRATIONS have been applied.
 */
export const CONNECTION_MIGRATIONS: readonly (readonly string[])[] = [
  [
    `CREATE TABLE IF NOT EXISTS connections (
       server_key TEXT PRIMARY KEY,
       server_id TEXT NOT NULL,
       skill TEXT NOT NULL,
       scope TEXT,
       tokens TEXT NOT NULL,
       client TEXT NOT NULL,
       discovery TEXT,
       expires_at INTEGER,
       connected_by TEXT NOT NULL,
       connected_at INTEGER NOT NULL,
       refreshed_at INTEGER
     )`,
    `CREATE TABLE IF NOT EXISTS connect_flows (
       id TEXT PRIMARY KEY,
       server_key TEXT NOT NULL,
       target TEXT NOT NULL,
       state TEXT NOT NULL UNIQUE,
       verifier TEXT NOT NULL,
       client TEXT NOT NULL,
       discovery TEXT,
       authorization_url TEXT NOT NULL,
       redirect_url TEXT NOT NULL,
       requested_by TEXT NOT NULL,
       created_at INTEGER NOT NULL,
       expires_at INTEGER NOT NULL,
       completed_at INTEGER
     )`,
  ],
  [
    `CREATE TABLE IF NOT EXISTS token_holders (
       server_key TEXT NOT NULL,
       holder TEXT NOT NULL,
       until INTEGER NOT NULL,
       PRIMARY KEY (server_key, holder)
     )`,
  ],
];

export function applyConnectionSchema(sql: SqlStorage): void {
  sql.exec(`CREATE TABLE IF NOT EXISTS connection_migrations (version INTEGER PRIMARY KEY)`);
  const applied = new Set(
    sql
      .exec<{ version: number }>(`SELECT version FROM connection_migrations`)
      .toArray()
      .map((row) => row.version),
  );
  CONNECTION_MIGRATIONS.forEach((statements, version) => {
    if (applied.has(version)) return;
    for (const statement of statements) sql.exec(statement);
    sql.exec(`INSERT INTO connection_migrations (version) VALUES (?)`, version);
  });
}

/** The durable subset of tokens: what is sealed into `connections.tokens`. */
export const storedTokensSchema = z
  .object({
    access_token: z.string().min(1),
    token_type: z.string().min(1),
    refresh_token: z.string().min(1).optional(),
    scope: z.string().optional(),
    expires_in: z.number().optional(),
    issuer: z.string().optional(),
  })
  .strip();
export type StoredTokens = z.output<typeof storedTokensSchema>;

/** The durable subset of client information: what is sealed into `client` columns. */
export const storedClientSchema = z
  .object({
    client_id: z.string().min(1),
    client_secret: z.string().optional(),
    client_id_issued_at: z.number().optional(),
    client_secret_expires_at: z.number().optional(),
    issuer: z.string().optional(),
    token_endpoint_auth_method: z.string().optional(),
    redirect_uris: z.array(z.string()).optional(),
  })
  .strip();
export type StoredClient = z.output<typeof storedClientSchema>;

/** What a member sees of a connection (their Connections page, /me/api/connections): never a token. */
export interface ConnectionSummary {
  serverKey: string;
  serverId: string;
  skill: string;
  scope: string | null;
  connectedBy: string;
  connectedAt: number;
  refreshedAt: number | null;
  expiresAt: number | null;
  refreshable: boolean;
}

/** A connect link's flow as the connect page shows it. */
export interface ConnectFlowView {
  flowId: string;
  serverId: string;
  skill: string;
  url: string;
  scopes: string[];
  authorizationUrl: string;
  authorizationOrigin: string;
  expiresAt: number;
  completedAt: number | null;
}

/** A row of `connections`, as the object reads it. */
export interface ConnectionRow {
  server_key: string;
  server_id: string;
  skill: string;
  scope: string | null;
  tokens: string;
  client: string;
  discovery: string | null;
  expires_at: number | null;
  connected_by: string;
  connected_at: number;
  refreshed_at: number | null;
  [key: string]: SqlStorageValue;
}

/** A row of `connect_flows`, as the object reads it. */
export interface FlowRow {
  id: string;
  server_key: string;
  target: string;
  state: string;
  verifier: string;
  client: string;
  discovery: string | null;
  authorization_url: string;
  redirect_url: string;
  requested_by: string;
  created_at: number;
  expires_at: number;
  completed_at: number | null;
  [key: string]: SqlStorageValue;
}

/** What a member is shown of a connection row. */
export function connectionSummary(row: ConnectionRow): ConnectionSummary {
  return {
    serverKey: row.server_key,
    serverId: row.server_id,
    skill: row.skill,
    scope: row.scope,
    connectedBy: row.connected_by,
    connectedAt: row.connected_at,
    refreshedAt: row.refreshed_at,
    expiresAt: row.expires_at,
    refreshable: row.discovery !== null,
  };
}
