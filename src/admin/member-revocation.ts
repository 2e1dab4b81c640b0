import type { OAuthHelpers } from "@cloudflare/workers-oauth-provider";
import { revokeAccessOf } from "../auth/member-removals";
import { connectionsStub } from "../downstream/connections/connection-target";
import { closeLiveSockets } from "../experts/live/live-run-feed";

export type MemberRevocation = { revokedGrants: number; removedConnections: number };

/**
 * An admin's revoke, the same from the admin API and the dashboard: the member's OAuth grants and
 * dashboard sessions end (auth), their open live sockets close, and their connections to
 * downstream servers are removed, so no token of theirs stays usable downstream either. It lives
 * here, not in auth, because auth sits below the layers that own sockets and connections.
 */
export async function revokeMember(env: Env, oauth: OAuthHelpers, userId: string): Promise<MemberRevocation> {
  const revokedGrants = await revokeAccessOf(env, oauth, userId);
  await closeLiveSockets(env, { userId });
  const removedConnections = await connectionsStub(env, { kind: "user", userId }).removeAll();
  return { revokedGrants, removedConnections };
}
