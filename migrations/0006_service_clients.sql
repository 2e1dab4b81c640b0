-- Service clients (SEP-1046, OAuth client credentials): automation (a CI job, a bot) that reaches
-- named skills with a secret of its own instead of a person's token. An admin creates one (admin
-- API, CLI); the secret is shown once and only its SHA-256 is kept (it is 32 random bytes, so a
-- slow hash adds nothing). Revoking sets revoked_at and deletes its tokens: the next request with
-- any of them is refused, because every request looks its token up here.
CREATE TABLE IF NOT EXISTS service_clients (
  client_id TEXT PRIMARY KEY,          -- "svc-" + random, the OAuth client_id
  name TEXT NOT NULL,                  -- shown as the run's user (login)
  secret_sha256 TEXT NOT NULL,         -- base64url SHA-256 of the secret
  skills TEXT NOT NULL,                -- JSON array of the skill names it may use
  created_by TEXT NOT NULL,            -- the admin's login
  created_at INTEGER NOT NULL,         -- epoch milliseconds
  revoked_at INTEGER,
  last_token_at INTEGER
) WITHOUT ROWID;

-- The access tokens the token endpoint issued to service clients, by the SHA-256 of the token
-- (the token itself is never stored). Expired rows of a client are deleted when it gets a new one.
CREATE TABLE IF NOT EXISTS service_client_tokens (
  token_sha256 TEXT PRIMARY KEY,
  client_id TEXT NOT NULL,
  expires_at INTEGER NOT NULL          -- epoch milliseconds
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS service_client_tokens_by_client ON service_client_tokens (client_id, expires_at);
