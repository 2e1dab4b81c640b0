-- What a run's outcome alone does not say, for the run list: which budget stopped it, and how
-- many of its tool calls were refused because the expert does not have the tool (blocked,
-- unlisted, or named by text the model read: a possible injection). Written with the row by the
-- session's outbox, never on the call's path. Rows indexed before this migration read NULL / 0.
ALTER TABLE run_index ADD COLUMN budget_exhausted TEXT;   -- steps | timeout | tool_calls | output_tokens
ALTER TABLE run_index ADD COLUMN refused_calls INTEGER NOT NULL DEFAULT 0;

-- A run page lists the runs of its thread (a paused run and the run that resumed it).
CREATE INDEX IF NOT EXISTS run_index_thread ON run_index (thread_id, started_at);

-- The run list's user filter takes the login the list shows as well as the internal id.
CREATE INDEX IF NOT EXISTS run_index_login ON run_index (user_login, started_at DESC);
