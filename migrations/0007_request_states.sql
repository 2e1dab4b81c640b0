-- The `requestState` of MCP 2026-07-28 multi-round-trip calls (input_required): the client gets
-- an opaque, random handle and echoes it on its retry; what it stands for (the paused run's
-- thread, the kind of reply, a connect flow) stays here, bound to the user, skill and expert
-- that minted it, with an expiry, and is used at most once. So a client can neither change the
-- state, nor replay it, nor hand it to another user (src/mcp/delivery/request-state-store.ts).
CREATE TABLE IF NOT EXISTS request_states (
  handle_sha256 TEXT PRIMARY KEY,      -- base64url SHA-256 of the handle (the handle itself is never stored)
  user_id TEXT NOT NULL,
  skill TEXT NOT NULL,
  expert TEXT NOT NULL,
  state TEXT NOT NULL,                 -- JSON: { v, kind, thread?, flowId?, connection? }
  expires_at INTEGER NOT NULL,         -- epoch milliseconds
  used_at INTEGER
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS request_states_by_user ON request_states (user_id, expires_at);
