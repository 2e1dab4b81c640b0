import type { OAuthHelpers } from "@cloudflare/workers-oauth-provider";
import { Hono } from "hono";
import { z } from "zod";
import { AuthConfigError } from "../../auth/auth-errors";
import { findMember, listMembers, type MemberRow } from "../../auth/member-directory";
import type { AdminContext, AdminEnv } from "../admin-context";
import { InvalidParameterError } from "../admin-errors";
import { GrantsUnavailableError, MemberNotFoundError } from "../member-errors";
import { revokeMember } from "../member-revocation";

/** The OAuth provider's helpers for this request's origin (the Worker's own provider, see src/index.ts). */
export type OAuthHelpersSource = (env: Env, origin: string) => OAuthHelpers;

const limitSchema = z.coerce.number().int().min(1).max(500).default(200);

/**
 * Members as the sign-in saw them (D1 `members`) with their active OAuth grants, and revoking
 * every grant of one member at once: the provider deletes the grants with their tokens, so the
 * member's next request is refused, whatever its access token's expiry.
 */
export function memberRoutes(oauthHelpers: OAuthHelpersSource | undefined): Hono<AdminEnv> {
  const routes = new Hono<AdminEnv>();

  routes.get("/members", async (c) => {
    const limit = limitSchema.safeParse(c.req.query("limit"));
    if (!limit.success) throw new InvalidParameterError("limit", "must be a whole number from 1 to 500", "Leave it out for up to 200 members.");
    const oauth = helpers(c, oauthHelpers);
    const members = await listMembers(c.env.DB, limit.data);
    const withGrants = await Promise.all(members.map(async (member) => ({ ...describe(member), grants: await grantsOf(oauth, member.user_id) })));
    return c.json({ members: withGrants });
  });

  routes.post("/members/:user/revoke", async (c) => {
    const name = c.req.param("user");
    const member = await findMember(c.env.DB, name);
    // A user id the table does not know (signed in before it existed) may still hold grants.
    const userId = member?.user_id ?? name;
    const oauth = helpers(c, oauthHelpers);
    const { revokedGrants, removedConnections } = await revokeMember(c.env, oauth, userId);
    if (!member && revokedGrants === 0 && removedConnections === 0) throw new MemberNotFoundError(name);
    return c.json({ userId, login: member?.login ?? null, revokedGrants, removedConnections });
  });

  return routes;
}

function describe(member: MemberRow) {
  return {
    userId: member.user_id,
    login: member.login,
    email: member.email,
    role: member.role,
    idp: member.idp,
    firstSeenAt: new Date(member.first_seen_at).toISOString(),
    lastSeenAt: new Date(member.last_seen_at).toISOString(),
  };
}

async function grantsOf(oauth: OAuthHelpers, userId: string): Promise<Array<{ id: string; clientId: string; createdAt: string; expiresAt: string | null }>> {
  const { items } = await oauth.listUserGrants(userId);
  return items.map((grant) => ({
    id: grant.id,
    clientId: grant.clientId,
    createdAt: new Date(grant.createdAt * 1000).toISOString(),
    expiresAt: grant.expiresAt === undefined ? null : new Date(grant.expiresAt * 1000).toISOString(),
  }));
}

function helpers(c: AdminContext, source: OAuthHelpersSource | undefined): OAuthHelpers {
  const fix = "Configure sign-in (IDP and its settings, see docs/deploying.md#sign-in); under `npm start -- --no-auth` there are no grants.";
  if (!source) throw new GrantsUnavailableError("this Worker was built without its OAuth provider.", fix);
  try {
    return source(c.env, new URL(c.req.url).origin);
  } catch (error) {
    if (error instanceof AuthConfigError) throw new GrantsUnavailableError(error.message, error.fix);
    throw error;
  }
}
