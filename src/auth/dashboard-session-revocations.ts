import { dashboardSessionEndedKey, dashboardSessionsEndedKey } from "../storage-keys";

/** How long a dashboard session cookie lives (the cookie's Max-Age and its signed `exp`). */
export const DASHBOARD_SESSION_TTL_SECONDS = 8 * 3600;
// KV refuses an expirationTtl under 60 s.
const MIN_KV_TTL_SECONDS = 60;

/** What the revocation check needs of a session: its id, its user, when it was issued and ends. */
export interface DashboardSessionRef {
  sid: string;
  userId: string;
  /** Issued at, ms. */
  issuedAt: number;
  /** The cookie's end, seconds (as signed in it). */
  exp: number;
}

/**
 * The dashboard's cookie is signed, not stored, so ending one server-side takes a mark: sign-out
 * marks its session id until the cookie would expire; revoking a member marks the time before
 * which each of their sessions ends. Lives in `auth` because the admin API's revoke writes it too.
 */
export async function endDashboardSession(env: Env, session: Pick<DashboardSessionRef, "sid" | "exp">, now = Date.now()): Promise<void> {
  const ttl = Math.max(MIN_KV_TTL_SECONDS, session.exp - Math.floor(now / 1000) + MIN_KV_TTL_SECONDS);
  await env.OAUTH_KV.put(dashboardSessionEndedKey(session.sid), JSON.stringify({ endedAt: now }), { expirationTtl: ttl });
}

/** Ends every dashboard session the user holds now (a later sign-in is unaffected, if membership still allows it). */
export async function endDashboardSessionsOf(env: Env, userId: string, now = Date.now()): Promise<void> {
  await env.OAUTH_KV.put(dashboardSessionsEndedKey(userId), String(now), { expirationTtl: DASHBOARD_SESSION_TTL_SECONDS + MIN_KV_TTL_SECONDS });
}

export async function isDashboardSessionEnded(env: Env, session: DashboardSessionRef): Promise<boolean> {
  const [ended, userEndedBefore] = await Promise.all([
    env.OAUTH_KV.get(dashboardSessionEndedKey(session.sid)),
    env.OAUTH_KV.get(dashboardSessionsEndedKey(session.userId)),
  ]);
  if (ended !== null) return true;
  // `<=`: a session issued in the same millisecond as the revoke is taken as issued before it.
  return userEndedBefore !== null && session.issuedAt <= Number(userEndedBefore);
}
