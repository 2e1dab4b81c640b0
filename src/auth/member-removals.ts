import type { OAuthHelpers } from "@cloudflare/workers-oauth-provider";
import { endDashboardSessionsOf } from "./dashboard-session-revocations";

// Beside the provider's own records in OAUTH_KV, under a prefix it never reads or purges.
const prefix = "slipsnisse-removed-member:";

/**
 * Takes a member out now, whatever the identity provider still says: marks the userId removed
 * (sign-in and refresh check the mark) and revokes every grant they hold, so their access and
 * refresh tokens stop working at once. For the admin API.
 */
export async function removeMember(env: Env, oauth: OAuthHelpers, userId: string): Promise<number> {
  await env.OAUTH_KV.put(`${prefix}${userId}`, JSON.stringify({ removedAt: Date.now() }));
  return revokeAccessOf(env, oauth, userId);
}

/**
 * An admin's revoke: every grant (MCP clients) and every dashboard session of the user end now.
 * Returns the number of grants revoked.
 */
export async function revokeAccessOf(env: Env, oauth: OAuthHelpers, userId: string): Promise<number> {
  await endDashboardSessionsOf(env, userId);
  return revokeGrantsOf(oauth, userId);
}

/**
 * Revokes every grant the user holds: the provider deletes each grant with its access and
 * refresh tokens, so the next request with any of them is refused (not only the next refresh).
 * The user may sign in again; removeMember also keeps them out.
 */
export async function revokeGrantsOf(oauth: OAuthHelpers, userId: string): Promise<number> {
  let revoked = 0;
  let cursor: string | undefined;
  // Bounded: a user has few grants; 50 pages of the provider's default page size is far beyond that.
  for (let page = 0; page < 50; page += 1) {
    const result = await oauth.listUserGrants(userId, cursor === undefined ? {} : { cursor });
    for (const grant of result.items) {
      await oauth.revokeGrant(grant.id, userId);
      revoked += 1;
    }
    cursor = result.cursor;
    if (cursor === undefined) break;
  }
  return revoked;
}

export async function restoreMember(env: Env, userId: string): Promise<void> {
  await env.OAUTH_KV.delete(`${prefix}${userId}`);
}

export async function isMemberRemoved(env: Env, userId: string): Promise<boolean> {
  return (await env.OAUTH_KV.get(`${prefix}${userId}`)) !== null;
}
