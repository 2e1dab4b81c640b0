-- The tenant-wide run index: one summary row per finished expert run, across every user and
-- skill, so admins can list, filter and add up runs without opening each user's session. The
-- full trace (steps, tool calls, arguments, result excerpts) stays in the user's ExpertSession
-- Durable Object, named by (skill, user_id); a row here says which one to open.
-- Written by the session after it has answered the call (never on the call's path). Nothing
-- here holds a secret: no arguments, no results, no texts, only names, counts and times.

CREATE TABLE IF NOT EXISTS run_index (
  run_id TEXT PRIMARY KEY,
  skill TEXT NOT NULL,
  expert TEXT NOT NULL,
  user_id TEXT NOT NULL,
  user_login TEXT,                 -- the display name from sign-in
  user_email TEXT,
  thread_id TEXT,
  catalog_version INTEGER,
  provider TEXT NOT NULL,
  model TEXT NOT NULL,
  outcome TEXT NOT NULL,           -- ok | budget_exhausted | cancelled | error
  trace_id TEXT NOT NULL,          -- the W3C trace id sent downstream and to the model
  started_at INTEGER NOT NULL,     -- epoch milliseconds
  ended_at INTEGER NOT NULL,
  elapsed_ms INTEGER NOT NULL,
  steps INTEGER NOT NULL,
  input_tokens INTEGER NOT NULL,
  output_tokens INTEGER NOT NULL,
  tool_calls INTEGER NOT NULL,
  tool_errors INTEGER NOT NULL,
  downstream_bytes INTEGER NOT NULL,
  cost REAL                        -- at the skill's catalog prices then; NULL when unpriced
) WITHOUT ROWID;

-- Newest first, with the run id as the tie-breaker of the paging cursor.
CREATE INDEX IF NOT EXISTS run_index_started ON run_index (started_at DESC, run_id DESC);
CREATE INDEX IF NOT EXISTS run_index_skill ON run_index (skill, started_at DESC);
CREATE INDEX IF NOT EXISTS run_index_user ON run_index (user_id, started_at DESC);

-- One row per downstream tool call of an indexed run, for per-server usage (calls, errors,
-- latency, last error). The error text is redacted of secrets and cut before it is written.
CREATE TABLE IF NOT EXISTS run_tool_calls (
  run_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  skill TEXT NOT NULL,
  server_id TEXT NOT NULL,
  tool TEXT NOT NULL,
  status TEXT NOT NULL,            -- ok | truncated | error | refused | withheld | cancelled
  elapsed_ms INTEGER NOT NULL,
  bytes INTEGER NOT NULL,
  error TEXT,
  at INTEGER NOT NULL,             -- epoch milliseconds the run ended
  PRIMARY KEY (run_id, seq)
) WITHOUT ROWID;

CREATE INDEX IF NOT EXISTS run_tool_calls_server ON run_tool_calls (at, skill, server_id);
