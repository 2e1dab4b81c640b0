import { base64Url } from "../../base64url";
import { TEAM_TABLES } from "../../storage-keys";
import { RequestStateRefusedError } from "./request-state-errors";

const table = TEAM_TABLES.requestStates;

/** Every handle starts so; anything else a client sends as requestState is not ours. */
const HANDLE_PREFIX = "rs1.";
/**
 * How long a 2026-07-28 client has to come back with the user's reply. SDK clients retry inside
 * the same `callTool`, as soon as the user answered the form or came back from the connect page;
 * an hour covers a person who walked away, and the paused run can still be resumed by `thread`.
 */
export const REQUEST_STATE_TTL_MS = 60 * 60_000;

/** Whom and what a requestState was issued for: a retry must come from the same. */
export interface RequestStateBinding {
  userId: string;
  skill: string;
  expert: string;
}

/**
 * `requestState` round-trips through the client, so it must not carry the state itself: the
 * client gets a random handle and the state stays in D1, bound to the user, skill and expert,
 * expiring, used once (migrations/0007_request_states.sql). A handle cannot be altered into
 * another (256 random bits), replayed, or handed to another user.
 */
export async function mintRequestState(db: D1Database, binding: RequestStateBinding, state: object, now: number): Promise<string> {
  const handle = `${HANDLE_PREFIX}${base64Url(crypto.getRandomValues(new Uint8Array(32)))}`;
  await db.batch([
    db.prepare(`DELETE FROM ${table} WHERE user_id = ?1 AND expires_at <= ?2`).bind(binding.userId, now),
    db
      .prepare(`INSERT INTO ${table} (handle_sha256, user_id, skill, expert, state, expires_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)`)
      .bind(await digest(handle), binding.userId, binding.skill, binding.expert, JSON.stringify(state), now + REQUEST_STATE_TTL_MS),
  ]);
  return handle;
}

interface RequestStateRow {
  user_id: string;
  skill: string;
  expert: string;
  state: string;
  expires_at: number;
  used_at: number | null;
}

/**
 * The state a retry's handle stands for, marked used; throws RequestStateRefusedError when it is
 * not ours, another user's or expert's, expired, or already used. The mark is one conditional
 * UPDATE, so two retries racing with one handle cannot both pass.
 */
export async function useRequestState(db: D1Database, binding: RequestStateBinding, handle: string, now: number): Promise<unknown> {
  if (!handle.startsWith(HANDLE_PREFIX) || handle.length > 200) throw new RequestStateRefusedError("unknown");
  const key = await digest(handle);
  const row = await db.prepare(`SELECT * FROM ${table} WHERE handle_sha256 = ?1`).bind(key).first<RequestStateRow>();
  if (!row) throw new RequestStateRefusedError("unknown");
  if (row.user_id !== binding.userId) throw new RequestStateRefusedError("another-user");
  if (row.skill !== binding.skill || row.expert !== binding.expert) throw new RequestStateRefusedError("another-expert");
  if (row.expires_at <= now) throw new RequestStateRefusedError("expired");
  const marked = await db.prepare(`UPDATE ${table} SET used_at = ?2 WHERE handle_sha256 = ?1 AND used_at IS NULL`).bind(key, now).run();
  if (row.used_at !== null || marked.meta.changes === 0) throw new RequestStateRefusedError("used");
  return JSON.parse(row.state);
}

async function digest(text: string): Promise<string> {
  return base64Url(new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text))));
}
