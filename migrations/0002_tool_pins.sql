-- Tool pins: the definition (name, description, inputSchema, annotations) of every downstream
-- tool a skill has seen, pinned by hash the first time it was listed. A later listing whose
-- definition hashes differently is withheld from the experts and recorded here as a pending
-- change until an admin accepts it (a changed description is a prompt-injection path into the
-- model's context: a "rug pull"). In D1, not KV: these are security decisions an admin reviews,
-- and KV is eventually consistent. Definitions are stored after secret redaction, so no
-- resolved header value can reach this table.

CREATE TABLE IF NOT EXISTS tool_pins (
  skill TEXT NOT NULL,
  server_id TEXT NOT NULL,
  tool_name TEXT NOT NULL,
  pinned_hash TEXT NOT NULL,       -- SHA-256 hex of pinned_json
  pinned_json TEXT NOT NULL,       -- canonical JSON of the pinned definition
  first_seen_at INTEGER NOT NULL,  -- epoch milliseconds the tool was first listed
  pinned_at INTEGER NOT NULL,      -- epoch milliseconds the current pin was set
  pinned_by TEXT NOT NULL,         -- 'first-use', or the login of the admin who accepted it
  pending_hash TEXT,               -- the live definition when it differs from the pin, else NULL
  pending_json TEXT,
  pending_seen_at INTEGER,         -- epoch milliseconds this pending definition was first seen
  CHECK ((pending_hash IS NULL) = (pending_json IS NULL) AND (pending_hash IS NULL) = (pending_seen_at IS NULL)),
  PRIMARY KEY (skill, server_id, tool_name)
) WITHOUT ROWID;

-- The admin's review list: pending changes of one skill.
CREATE INDEX IF NOT EXISTS tool_pins_pending ON tool_pins (skill) WHERE pending_hash IS NOT NULL;
