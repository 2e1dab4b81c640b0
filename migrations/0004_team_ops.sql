-- Usage counters for the catalog's per-skill `limits`: one row per counted subject and UTC day.
-- A subject is a skill's whole use (`skill:<skill>`) or one user's use of it
-- (`user:<skill>:<user id>`). A run reserves its slot with one conditional upsert
-- (runs + 1, in_flight + 1 only while every counter is under its limit, RETURNING the row):
-- D1 runs each statement alone, so two isolates racing for the last unit cannot both get it.
-- Tokens and cost are added when the run ends, in the same statement that frees its in-flight
-- slot. Rows are kept for the admin's usage view and deleted with the retention sweep.
CREATE TABLE IF NOT EXISTS usage_counters (
  subject TEXT NOT NULL,
  day TEXT NOT NULL,                   -- UTC date, YYYY-MM-DD, of the runs' start
  runs INTEGER NOT NULL DEFAULT 0,
  tokens INTEGER NOT NULL DEFAULT 0,   -- input plus output tokens
  cost_usd REAL NOT NULL DEFAULT 0,    -- priced runs only (the skill's `pricing`)
  in_flight INTEGER NOT NULL DEFAULT 0,
  updated_at INTEGER NOT NULL,         -- epoch milliseconds
  PRIMARY KEY (subject, day)
) WITHOUT ROWID;

-- Members as the admin sees them: who signed in, as whom, and when they were first and last
-- seen. Upserted at sign-in and, on API use, at most once per few minutes per user (the
-- condition on last_seen_at keeps the write off most requests). No tokens, only the identity.
CREATE TABLE IF NOT EXISTS members (
  user_id TEXT PRIMARY KEY,
  login TEXT NOT NULL,
  email TEXT,
  role TEXT NOT NULL,                  -- member | admin, as of the last sign-in
  idp TEXT,
  first_seen_at INTEGER NOT NULL,      -- epoch milliseconds
  last_seen_at INTEGER NOT NULL
) WITHOUT ROWID;
