import { Hono } from "hono";
import { findMember } from "../../auth/member-directory";
import { connectionsStub } from "../../downstream/connections/connection-target";
import type { AdminEnv } from "../admin-context";
import { describeConnection, memberConnections, removeConnections, teamConnections } from "../connection-overview";

/**
 * Connections (docs/catalog.md#connections) as an admin sees them: which servers a member connected,
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
    const [members, team] = await Promise.all([memberConnections(c.env), teamConnections(c.env)]);
    return c.json({
      members: members.map((row) => ({ userId: row.userId, login: row.login, connections: row.connections.map(describeConnection) })),
      team: team.map(describeConnection),
    });
  });

  routes.get("/connections/team", async (c) => c.json({ connections: (await teamConnections(c.env)).map(describeConnection) }));

  routes.delete("/connections/team", async (c) => c.json({ removed: await removeConnections(c.env, { kind: "team" }, c.req.query("server")) }));

  return routes;
}

async function memberOwner(env: Env, name: string): Promise<{ kind: "user"; userId: string }> {
  // A user id the members table does not know may still have connected.
  const member = await findMember(env.DB, name);
  return { kind: "user", userId: member?.user_id ?? name };
}
