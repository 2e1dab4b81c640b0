import { Hono } from "hono";
import { findMember, listMembers } from "../../auth/member-directory";
import type { ConnectionSummary } from "../../downstream/connections/connection-schema";
import { connectionsStub, type ConnectionOwner } from "../../downstream/connections/connection-target";
import type { AdminEnv } from "../admin-context";
import { InvalidParameterError } from "../admin-errors";

/**
 * Connections (README "Connections") as an admin sees them: which servers a member connected,
 * when, with which scopes (never a token), and the team's connections; revoking one or all.
 * Admin-only through teamAdminRoutes.
 */
export function connectionRoutes(): Hono<AdminEnv> {
  const routes = new Hono<AdminEnv>();

  routes.get("/members/:user/connections", async (c) => {
    const owner = await memberOwner(c.env, c.req.param("user"));
    return c.json({ userId: owner.userId, connections: (await connectionsStub(c.env, owner).list()).map(describeConnection) });
  });

  routes.delete("/members/:user/connections", async (c) => {
    const owner = await memberOwner(c.env, c.req.param("user"));
    return c.json({ userId: owner.userId, removed: await removeConnections(c.env, owner, c.req.query("server")) });
  });

  // Every member's connections, for an admin's overview: which member connected which server, when, with which scopes.
  routes.get("/connections", async (c) => {
    const members = await listMembers(c.env.DB, 500);
    const rows = await Promise.all(
      members.map(async (member) => ({
        userId: member.user_id,
        login: member.login,
        connections: (await connectionsStub(c.env, { kind: "user", userId: member.user_id }).list()).map(describeConnection),
      })),
    );
    const team = (await connectionsStub(c.env, { kind: "team" }).list()).map(describeConnection);
    return c.json({ members: rows.filter((row) => row.connections.length > 0), team });
  });

  routes.get("/connections/team", async (c) => c.json({ connections: (await connectionsStub(c.env, { kind: "team" }).list()).map(describeConnection) }));

  routes.delete("/connections/team", async (c) => c.json({ removed: await removeConnections(c.env, { kind: "team" }, c.req.query("server")) }));

  return routes;
}

async function memberOwner(env: Env, name: string): Promise<{ kind: "user"; userId: string }> {
  // A user id the members table does not know may still have connected.
  const member = await findMember(env.DB, name);
  return { kind: "user", userId: member?.user_id ?? name };
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
