import { LIMIT_COUNTER_TABLES } from "../limits/limit-counters";
import { REQUEST_STATES_TABLE } from "../protocol/request-states";
import { CALL_STREAMS_TABLE } from "../protocol/stream-records";

/**
 * The ExpertSession's SQLite tables (one Durable Object per tenant, skill and user). This is
 * the durable subset of a session: run records and thread histories. Live things (MCP clients,
 * abort controllers, resolved secret headers, model objects) stay in memory and are rebuilt
 * after a restart or hibernation. Listed in src/storage-keys.ts with every other store.
 *
 * runs               one row per expert call; inserted as "running" before the model is called so
 *                    a run cut off by a disconnect or eviction is still on record, updated at the end.
 *                    With its trace: trace id, caller (user id, login, email), the arguments, the
 *                    notes and the answer (texts redacted of secrets and cut to bounds).
 * run_steps          one row per model step of a run: finish reason, tokens, text, tool calls (JSON,
 *                    with redacted arguments and result excerpts), the model call (JSON).
 * threads            a follow-up conversation handle minted by the session, bound to this DO's user,
 *                    with the running token total of the turns it holds. `updated_at` (the last
 *                    append) is what a retention job expires threads by (indexed for it).
 * thread_turns       the ModelMessages of a thread, oldest first, trimmed to a token budget.
 * paused_runs        a run of an ask_back expert waiting for the orchestrator's answer, one per
 *                    thread: its durable state (paused-run.ts) as JSON, until answered or expired.
 * run_index_outbox   an ended run's D1 run index row and tool-call rows (JSON) waiting for the
 *                    alarm's batched flush (run-index-outbox.ts), with its failed attempts and
 *                    retry time; deleted once written to D1.
 * limit_counters     this user's usage counters of the skill (limits.per_user) per UTC day, with
 *                    the version last copied to D1 (src/experts/limits/limit-counters.ts).
 * limit_runs         the runs holding an in-flight slot in those counters.
 * call_streams       a resumable 2025-11-25 call stream's id with its run id, the client's request id
 *                    and progress token, and its deadline (stream-records.ts); dropped ten minutes after it.
 * request_states     SHA-256 of a 2026-07-28 `requestState` handle → the expert it was issued for,
 *                    the state it stands for (thread, reply kind, connect flow), expires_at, used_at
 *                    (request-states.ts); expired rows go at the next mint, at most 256 live.
 * session_migrations which of SESSION_MIGRATIONS have been applied.
 *
 * Every object of a namespace keeps its own database, so a schema change is a new entry at the
 * end of SESSION_MIGRATIONS, applied by each object when it next starts; never edit an entry.
 */
export const SESSION_MIGRATIONS: readonly (readonly string[])[] = [
  [
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
       message TEXT NOT NULL,
       approx_tokens INTEGER NOT NULL,
       PRIMARY KEY (thread_id, seq)
     )`,
  ],
  // Thread trimming keeps history starting at a user turn; it needs each turn's role.
  [`ALTER TABLE thread_turns ADD COLUMN role TEXT NOT NULL DEFAULT 'user'`, `UPDATE thread_turns SET role = coalesce(json_extract(message, '$.role'), 'user')`],
  // A run is a full trace: who called, with what, what the runner left out, and what came back.
  [
    `ALTER TABLE runs ADD COLUMN trace_id TEXT`,
    `ALTER TABLE runs ADD COLUMN caller TEXT`,
    `ALTER TABLE runs ADD COLUMN args TEXT`,
    `ALTER TABLE runs ADD COLUMN notes TEXT`,
    `ALTER TABLE runs ADD COLUMN answer TEXT`,
    `ALTER TABLE run_steps ADD COLUMN model_call TEXT`,
  ],
  // A running token total per thread, so an append knows without a scan whether to trim.
  [
    `ALTER TABLE threads ADD COLUMN approx_tokens INTEGER NOT NULL DEFAULT 0`,
    `UPDATE threads SET approx_tokens = coalesce((SELECT SUM(approx_tokens) FROM thread_turns WHERE thread_id = threads.id), 0)`,
  ],
  // A retention job finds idle threads by this index.
  [`CREATE INDEX IF NOT EXISTS threads_updated_at ON threads (updated_at)`],
  // Ask-back: a run paused on a question to the orchestrator, resumed by the thread's next call.
  [
    `CREATE TABLE IF NOT EXISTS paused_runs (
       thread_id TEXT PRIMARY KEY,
       run_id TEXT NOT NULL,
       expert TEXT NOT NULL,
       state TEXT NOT NULL,
       paused_at INTEGER NOT NULL,
       expires_at INTEGER NOT NULL
     )`,
  ],
  // MCP Tasks: an expert call run as a task, kept with its request until it expires (task-store.ts).
  [
    `CREATE TABLE IF NOT EXISTS tasks (
       task_id TEXT PRIMARY KEY,
       run_id TEXT NOT NULL,
       status TEXT NOT NULL,
       status_message TEXT,
       request TEXT NOT NULL,
       result TEXT,
       structured_expected INTEGER NOT NULL,
       created_at INTEGER NOT NULL,
       updated_at INTEGER NOT NULL,
       expires_at INTEGER NOT NULL,
       attempts INTEGER NOT NULL DEFAULT 0
     )`,
    `CREATE INDEX IF NOT EXISTS tasks_created_at ON tasks (created_at)`,
  ],
  // The run index is written by the alarm in batches: rows wait here, durable, until then.
  [
    `CREATE TABLE IF NOT EXISTS run_index_outbox (
       seq INTEGER PRIMARY KEY AUTOINCREMENT,
       run_id TEXT NOT NULL UNIQUE,
       entry TEXT NOT NULL,
       started_at INTEGER NOT NULL,
       queued_at INTEGER NOT NULL,
       attempts INTEGER NOT NULL DEFAULT 0,
       retry_at INTEGER NOT NULL DEFAULT 0
     )`,
  ],
  // Runs a restart cut off were recorded as "error" while the index said "interrupted": one name now.
  [`UPDATE runs SET outcome = 'interrupted' WHERE outcome = 'error' AND error LIKE 'interrupted: the session restarted%'`],
  // The user's usage counters live here, reserved with no round trip; the alarm copies them to D1.
  [...LIMIT_COUNTER_TABLES],
  // The 2026-07-28 Tasks extension: which protocol a task speaks, and the user input it waits for.
  [`ALTER TABLE tasks ADD COLUMN generation TEXT NOT NULL DEFAULT 'v1'`, `ALTER TABLE tasks ADD COLUMN input_request TEXT`],
  // Which run and request a resumable call stream names, so a resume after a restart finds the run's outcome (stream-records.ts).
  [...CALL_STREAMS_TABLE],
  // Which downstream servers and tools a run found unavailable (run-log.ts), as the result's `_meta` says.
  [`ALTER TABLE runs ADD COLUMN unavailable TEXT`],
  // The requestState handles of 2026-07-28 retries (request-states.ts).
  [...REQUEST_STATES_TABLE],
];

/** Applies the migrations this object has not run yet, each in its own transaction. */
export function applySessionSchema(storage: DurableObjectStorage): void {
  const sql = storage.sql;
  sql.exec(`CREATE TABLE IF NOT EXISTS session_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)`);
  const applied = sql.exec<{ version: number | null }>(`SELECT MAX(version) AS version FROM session_migrations`).one().version ?? 0;
  SESSION_MIGRATIONS.forEach((statements, index) => {
    const version = index + 1;
    if (version <= applied) return;
    storage.transactionSync(() => {
      for (const statement of statements) sql.exec(statement);
      sql.exec(`INSERT INTO session_migrations (version, applied_at) VALUES (?, ?)`, version, Date.now());
    });
  });
}
