/**
 * The ExpertSession's SQLite tables (one Durable Object per tenant, skill and user). This is
 * the durable subset of a session: run records and thread histories. Live things (MCP clients,
 * abort controllers, resolved secret headers, model objects) stay in memory and are rebuilt
 * after a restart or hibernation. Listed in src/storage-keys.ts with every other store.
 *
 * runs          one row per expert call; inserted as "running" before the model is called so a
 *               run cut off by a disconnect or eviction is still on record, updated at the end.
 * run_steps     one row per model step of a run: finish reason, tokens, text, tool calls (JSON).
 * threads       a follow-up conversation handle minted by the session, bound to this DO's user.
 * thread_turns  the ModelMessages of a thread, oldest first, trimmed to a token budget.
 */
export const SESSION_SCHEMA = [
  `CREATE TABLE IF NOT EXISTS runs (
     id TEXT PRIMARY KEY,
     skill TEXT NOT NULL,
     expert TEXT NOT NULL,
     user_id TEXT NOT NULL,
     thread_id TEXT,
     catalog_version INTEGER,
     provider TEXT NOT NULL,
     model TEXT,
     outcome TEXT NOT NULL,
     error TEXT,
     usage TEXT,
     started_at INTEGER NOT NULL,
     ended_at INTEGER
   )`,
  `CREATE TABLE IF NOT EXISTS run_steps (
     run_id TEXT NOT NULL,
     step INTEGER NOT NULL,
     finish_reason TEXT NOT NULL,
     input_tokens INTEGER NOT NULL,
     output_tokens INTEGER NOT NULL,
     text TEXT NOT NULL,
     tool_calls TEXT NOT NULL,
     PRIMARY KEY (run_id, step)
   )`,
  `CREATE TABLE IF NOT EXISTS threads (
     id TEXT PRIMARY KEY,
     expert TEXT NOT NULL,
     created_at INTEGER NOT NULL,
     updated_at INTEGER NOT NULL
   )`,
  `CREATE TABLE IF NOT EXISTS thread_turns (
     thread_id TEXT NOT NULL,
     seq INTEGER NOT NULL,
     role TEXT NOT NULL,
     message TEXT NOT NULL,
     approx_tokens INTEGER NOT NULL,
     PRIMARY KEY (thread_id, seq)
   )`,
] as const;

export function applySessionSchema(sql: SqlStorage): void {
  for (const statement of SESSION_SCHEMA) sql.exec(statement);
}
