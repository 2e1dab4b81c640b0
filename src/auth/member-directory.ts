import { TEAM_TABLES } from "../storage-keys";
import type { UserProps } from "./user-props";

const table = TEAM_TABLES.members;

/** How stale a member's last_seen_at may get before API use writes it again. */
export const MEMBER_SEEN_INTERVAL_MS = 5 * 60_000;
// Per isolate: users whose last_seen_at this isolate wrote recently, so most requests skip D1.
// Bounded: when full it is cleared, which costs at most one extra write per active user.
const MAX_REMEMBERED = 5_000;
const lastWritten = new Map<string, number>();

export interface MemberRow {
  user_id: string;
  login: string;
  email: string | null;
  role: string;
  idp: string | null;
  first_seen_at: number;
  last_seen_at: number;
}

/** At sign-in: creates the member or refreshes who they are now (login, email, role), and marks them seen. */
export async function recordSignIn(db: D1Database, user: UserProps, now: number): Promise<void> {
  await db
    .prepare(
      `INSERT INTO ${table} (user_id, login, email, role, idp, first_seen_at, last_seen_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6)
       ON CONFLICT (user_id) DO UPDATE SET login = excluded.login, email = excluded.email, role = excluded.role, idp = excluded.idp, last_seen_at = excluded.last_seen_at`,
    )
    .bind(user.userId, user.login, user.email ?? null, user.role, user.idp ?? null, now)
    .run();
  lastWritten.set(user.userId, now);
}

/**
 * On API use: marks the member seen, at most once per MEMBER_SEEN_INTERVAL_MS per user and
 * isolate, and the UPDATE itself writes only when the stored time is older than that, so many
 * isolates add no more than one write per interval each. A user signed in before this table
 * existed gets their row here. Returns the write to D1, or null when the throttle skipped it
 * (decided without a promise: every MCP request of a member asks).
 */
export function recordSeen(db: D1Database, user: UserProps, now: number): Promise<void> | null {
  const last = lastWritten.get(user.userId);
  if (last !== undefined && now - last < MEMBER_SEEN_INTERVAL_MS) return null;
  if (lastWritten.size >= MAX_REMEMBERED) lastWritten.clear();
  lastWritten.set(user.userId, now);
  return db
    .prepare(
      `INSERT INTO ${table} (user_id, login, email, role, idp, first_seen_at, last_seen_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6)
       ON CONFLICT (user_id) DO UPDATE SET last_seen_at = excluded.last_seen_at WHERE last_seen_at < ?7`,
    )
    .bind(user.userId, user.login, user.email ?? null, user.role, user.idp ?? null, now, now - MEMBER_SEEN_INTERVAL_MS)
    .run()
    .then(() => undefined);
}

/** Forgets this isolate's throttle (tests that inject the clock). */
export function forgetSeenThrottle(): void {
  lastWritten.clear();
}

export async function listMembers(db: D1Database, limit: number): Promise<MemberRow[]> {
  const rows = await db.prepare(`SELECT * FROM ${table} ORDER BY last_seen_at DESC, user_id LIMIT ?1`).bind(limit).all<MemberRow>();
  return rows.results;
}

/** A member by user id, or else by login or email (case-insensitive); null when unknown or ambiguous. */
export async function findMember(db: D1Database, userOrLogin: string): Promise<MemberRow | null> {
  const byId = await db.prepare(`SELECT * FROM ${table} WHERE user_id = ?1`).bind(userOrLogin).first<MemberRow>();
  if (byId) return byId;
  const byLogin = await db
    .prepare(`SELECT * FROM ${table} WHERE lower(login) = lower(?1) OR lower(email) = lower(?1) LIMIT 2`)
    .bind(userOrLogin)
    .all<MemberRow>();
  return byLogin.results.length === 1 ? (byLogin.results[0] ?? null) : null;
}
