import { base64Url } from "../../base64url";
import { TEAM_TABLES } from "../../storage-keys";
import { randomToken } from "../pkce";
import { type UserProps, vouchFor } from "../user-props";

const clients = TEAM_TABLES.serviceClients;
const tokens = TEAM_TABLES.serviceClientTokens;

/** Every client id this store issues starts so; the token endpoint sends no other id here. */
export const SERVICE_CLIENT_ID_PREFIX = "svc-";
/**
 * Every access token it issues starts so: the provider hands us the bearer tokens it does not
 * know (resolveExternalToken), and only these cost a D1 read.
 */
export const SERVICE_TOKEN_PREFIX = "svct_";

export interface ServiceClient {
  clientId: string;
  name: string;
  skills: string[];
  createdBy: string;
  createdAt: number;
  revokedAt: number | null;
  lastTokenAt: number | null;
}

interface ServiceClientRow {
  client_id: string;
  name: string;
  secret_sha256: string;
  skills: string;
  created_by: string;
  created_at: number;
  revoked_at: number | null;
  last_token_at: number | null;
}

/** Creates a service client; the secret is returned here once and only its digest is kept. */
export async function createServiceClient(
  db: D1Database,
  input: { name: string; skills: string[]; createdBy: string },
  now: number,
): Promise<{ client: ServiceClient; secret: string }> {
  const clientId = `${SERVICE_CLIENT_ID_PREFIX}${randomToken().slice(0, 22)}`;
  const secret = randomToken();
  await db
    .prepare(`INSERT INTO ${clients} (client_id, name, secret_sha256, skills, created_by, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)`)
    .bind(clientId, input.name, await digest(secret), JSON.stringify(input.skills), input.createdBy, now)
    .run();
  return {
    client: { clientId, name: input.name, skills: input.skills, createdBy: input.createdBy, createdAt: now, revokedAt: null, lastTokenAt: null },
    secret,
  };
}

export async function listServiceClients(db: D1Database): Promise<ServiceClient[]> {
  const rows = await db.prepare(`SELECT * FROM ${clients} ORDER BY created_at DESC, client_id`).all<ServiceClientRow>();
  return rows.results.map(describe);
}

/** Revokes a client and deletes its tokens; false when no such client exists. Idempotent. */
export async function revokeServiceClient(db: D1Database, clientId: string, now: number): Promise<boolean> {
  const [updated] = await db.batch([
    db.prepare(`UPDATE ${clients} SET revoked_at = coalesce(revoked_at, ?2) WHERE client_id = ?1`).bind(clientId, now),
    db.prepare(`DELETE FROM ${tokens} WHERE client_id = ?1`).bind(clientId),
  ]);
  return (updated?.meta.changes ?? 0) > 0;
}

/**
 * The client these credentials authenticate, or null: unknown id, wrong secret or revoked all
 * read the same to the caller (RFC 6749 §5.2 invalid_client). Digests are compared in constant time.
 */
export async function authenticateServiceClient(db: D1Database, clientId: string, secret: string): Promise<ServiceClient | null> {
  if (!clientId.startsWith(SERVICE_CLIENT_ID_PREFIX)) return null;
  const row = await db.prepare(`SELECT * FROM ${clients} WHERE client_id = ?1`).bind(clientId).first<ServiceClientRow>();
  const presented = new TextEncoder().encode(await digest(secret));
  const expected = new TextEncoder().encode(row?.secret_sha256 ?? (await digest(randomToken())));
  const same = presented.byteLength === expected.byteLength && crypto.subtle.timingSafeEqual(presented, expected);
  if (!row || !same || row.revoked_at !== null) return null;
  return describe(row);
}

/** Issues an access token for the client, valid `ttlSeconds`; forgets its expired ones. */
export async function issueServiceToken(db: D1Database, clientId: string, ttlSeconds: number, now: number): Promise<string> {
  const token = `${SERVICE_TOKEN_PREFIX}${randomToken()}`;
  await db.batch([
    db.prepare(`DELETE FROM ${tokens} WHERE client_id = ?1 AND expires_at <= ?2`).bind(clientId, now),
    db.prepare(`INSERT INTO ${tokens} (token_sha256, client_id, expires_at) VALUES (?1, ?2, ?3)`).bind(await digest(token), clientId, now + ttlSeconds * 1000),
    db.prepare(`UPDATE ${clients} SET last_token_at = ?2 WHERE client_id = ?1`).bind(clientId, now),
  ]);
  return token;
}

/** The user a service token stands for, or null when it is unknown, expired or its client revoked. */
export async function serviceTokenUser(db: D1Database, token: string, now: number): Promise<UserProps | null> {
  if (!token.startsWith(SERVICE_TOKEN_PREFIX)) return null;
  const row = await db
    .prepare(
      `SELECT c.* FROM ${tokens} t JOIN ${clients} c ON c.client_id = t.client_id
       WHERE t.token_sha256 = ?1 AND t.expires_at > ?2 AND c.revoked_at IS NULL`,
    )
    .bind(await digest(token), now)
    .first<ServiceClientRow>();
  return row ? serviceUser(describe(row)) : null;
}

/** How a service client appears to the MCP surface and in its runs: a member limited to its skills. */
export function serviceUser(client: ServiceClient): UserProps {
  return vouchFor({ userId: `service-${client.clientId}`, login: client.name, role: "member", idp: "service", skills: client.skills });
}

function describe(row: ServiceClientRow): ServiceClient {
  const skills: unknown = JSON.parse(row.skills);
  return {
    clientId: row.client_id,
    name: row.name,
    skills: Array.isArray(skills) ? skills.filter((skill): skill is string => typeof skill === "string") : [],
    createdBy: row.created_by,
    createdAt: row.created_at,
    revokedAt: row.revoked_at,
    lastTokenAt: row.last_token_at,
  };
}

async function digest(text: string): Promise<string> {
  return base64Url(new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text))));
}
