import { base64Url } from "../../base64url";

/*
 * The `requestState` of MCP 2026-07-28 multi-round-trip calls (input_required, and the connect
 * answer): it round-trips through the client, so it must not carry the state itself. The client
 * gets a random handle; what it stands for (the paused run's thread, the kind of reply, a
 * connect flow) stays in the session that issued it, with the expert it was issued for, an
 * expiry, and a mark once used. The session is the user's own (tenant, skill, user), so a handle
 * sent by another user reaches another session, where it was never issued. Kept here rather
 * than in D1: the retry is an expert call, whose path has no D1 round trip.
 */

/** Every handle starts so; anything else a client sends as requestState is not ours. */
const HANDLE_PREFIX = "rs1.";
const MAX_HANDLE_LENGTH = 200;
/**
 * How long a 2026-07-28 client has to come back with the user's reply. SDK clients retry inside
 * the same `callTool`, as soon as the user answered the form or came back from the connect page;
 * an hour covers a person who walked away, and the paused run can still be resumed by `thread`.
 */
export const REQUEST_STATE_TTL_MS = 60 * 60_000;
/** At most this many live handles per session: a client that pauses in a loop cannot grow the table. */
const MAX_LIVE_HANDLES = 256;

export const REQUEST_STATES_TABLE = [
  `CREATE TABLE IF NOT EXISTS request_states (
     handle_sha256 TEXT PRIMARY KEY,
     expert TEXT NOT NULL,
     state TEXT NOT NULL,
     expires_at INTEGER NOT NULL,
     used_at INTEGER
   )`,
  `CREATE INDEX IF NOT EXISTS request_states_expires_at ON request_states (expires_at)`,
] as const;

/** Why a handle was refused ("unknown" also for a handle of another user: it was never issued here). */
export type RequestStateProblem = "unknown" | "another-expert" | "expired" | "used";

/** A state is a few flat fields (a thread, a reply kind, a connect flow), so it crosses RPC as it is. */
export type RequestStateFields = Record<string, string | number | boolean>;

export type OpenedRequestState = { state: RequestStateFields } | { problem: RequestStateProblem };

interface Row extends Record<string, SqlStorageValue> {
  expert: string;
  state: string;
  expires_at: number;
  used_at: number | null;
}

export class RequestStates {
  constructor(private readonly sql: SqlStorage) {}

  /** A new handle for `state`, issued for `expert`. */
  async mint(expert: string, state: RequestStateFields, now: number): Promise<string> {
    const handle = `${HANDLE_PREFIX}${base64Url(crypto.getRandomValues(new Uint8Array(32)))}`;
    const key = await digest(handle);
    this.sql.exec(`DELETE FROM request_states WHERE expires_at <= ?`, now);
    this.sql.exec(
      `DELETE FROM request_states WHERE handle_sha256 IN (SELECT handle_sha256 FROM request_states ORDER BY expires_at DESC LIMIT -1 OFFSET ?)`,
      MAX_LIVE_HANDLES - 1,
    );
    this.sql.exec(
      `INSERT INTO request_states (handle_sha256, expert, state, expires_at) VALUES (?, ?, ?, ?)`,
      key,
      expert,
      JSON.stringify(state),
      now + REQUEST_STATE_TTL_MS,
    );
    return handle;
  }

  /** The state `handle` stands for, marked used; a handle not issued here for `expert`, expired or used is refused. */
  async use(expert: string, handle: string, now: number): Promise<OpenedRequestState> {
    if (!handle.startsWith(HANDLE_PREFIX) || handle.length > MAX_HANDLE_LENGTH) return { problem: "unknown" };
    const key = await digest(handle);
    // The object runs one event at a time and nothing awaits between the read and the mark: one use.
    const row = this.sql.exec<Row>(`SELECT expert, state, expires_at, used_at FROM request_states WHERE handle_sha256 = ?`, key).toArray()[0];
    if (!row) return { problem: "unknown" };
    if (row.expert !== expert) return { problem: "another-expert" };
    if (row.expires_at <= now) return { problem: "expired" };
    if (row.used_at !== null) return { problem: "used" };
    this.sql.exec(`UPDATE request_states SET used_at = ? WHERE handle_sha256 = ?`, now, key);
    return { state: JSON.parse(row.state) as RequestStateFields };
  }
}

async function digest(text: string): Promise<string> {
  return base64Url(new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text))));
}
