import { listMembers } from "../auth/member-directory";
import { getSkill, listSkills } from "../catalog/catalog-store";
import type { ConnectionSummary } from "../downstream/connections/connection-schema";
import { connectionsStub, connectionTarget, serverKey, type ConnectionOwner, type ConnectionTarget } from "../downstream/connections/connection-target";
import { InvalidParameterError } from "./admin-errors";

/** How many members the overviews look at (as the members page). */
const MEMBER_LIMIT = 500;

/**
 * What an admin sees of connections (docs/catalog.md#connections), for the admin API's routes and the
 * dashboard's Connections page alike: the catalog's servers with `auth`, every member's
 * connections and the team's. Summaries only: a token never leaves UserConnections here.
 */
export interface AuthServer {
  skill: string;
  serverId: string;
  /** The server's URL, normalised: what connections are keyed by (connection-target.ts). */
  serverKey: string;
  target: ConnectionTarget;
}

export interface MemberConnections {
  userId: string;
  login: string;
  connections: ConnectionSummary[];
}

/** Every server with `auth` in every live skill, in skill and server order. */
export async function authServers(db: D1Database): Promise<AuthServer[]> {
  const skills = await Promise.all((await listSkills(db)).map((summary) => getSkill(db, summary.name)));
  return skills.flatMap((skill) =>
    skill === null
      ? []
      : Object.entries(skill.config.servers).flatMap(([serverId, config]) => {
          const target = connectionTarget(skill.name, serverId, config);
          return target === undefined ? [] : [{ skill: skill.name, serverId, serverKey: serverKey(target.url), target }];
        }),
  );
}

/** The server `serverId` of `skill` when it has `auth`, else undefined. */
export async function authServer(db: D1Database, skill: string, serverId: string): Promise<AuthServer | undefined> {
  const stored = await getSkill(db, skill);
  const config = stored?.config.servers[serverId];
  const target = config === undefined ? undefined : connectionTarget(skill, serverId, config);
  return target === undefined ? undefined : { skill, serverId, serverKey: serverKey(target.url), target };
}

/** Members with at least one connection (each member's UserConnections object is asked once). */
export async function memberConnections(env: Env): Promise<MemberConnections[]> {
  const members = await listMembers(env.DB, MEMBER_LIMIT);
  const rows = await Promise.all(
    members.map(async (member) => ({
      userId: member.user_id,
      login: member.login,
      connections: await connectionsStub(env, { kind: "user", userId: member.user_id }).list(),
    })),
  );
  return rows.filter((row) => row.connections.length > 0);
}

export function teamConnections(env: Env): Promise<ConnectionSummary[]> {
  return connectionsStub(env, { kind: "team" }).list();
}

/** One server (`server=<its URL>`) or every connection of the owner; the count removed. */
export async function removeConnections(env: Env, owner: ConnectionOwner, server: string | undefined): Promise<number> {
  const stub = connectionsStub(env, owner);
  if (server === undefined) return stub.removeAll();
  if (!URL.canParse(server))
    throw new InvalidParameterError("server", "must be the server's URL as listed", "List the connections first and pass one `serverKey`.");
  return (await stub.remove(server)) ? 1 : 0;
}

export function describeConnection(connection: ConnectionSummary) {
  const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
  return {
    server: connection.serverId,
    serverKey: connection.serverKey,
    skill: connection.skill,
    scope: connection.scope,
    connectedBy: connection.connectedBy,
    connectedAt: iso(connection.connectedAt),
    refreshedAt: iso(connection.refreshedAt),
    expiresAt: iso(connection.expiresAt),
  };
}
