/**
 * Every place Slipsnisse keeps state, in one list: D1 tables, KV key prefixes and Durable Object
 * SQLite tables, each with why it exists. Add yours here when you add a store. Rule for all of
 * them: no secret values, tokens or closures are ever written (headers keep `${SECRET_NAME}`
 * references; secrets are read from the Worker env at use time).
 *
 * D1 (binding DB), schema in migrations/ — the source of truth, read on cache misses and by admin:
 *   catalog_versions  (skill, version) → validated SkillConfig JSON, author, note, created_at.
 *                     Append-only history, so every change is attributable and restorable.
 *   skills            name → current_version, updated_at. The live pointer; no row = not served.
 *   usage_counters    (subject, UTC day) → runs, tokens, cost_usd, in_flight for the catalog's `limits`
 *                     (src/experts/limits/usage-counters.ts); subject `skill:<skill>` or
 *                     `user:<skill>:<user id>`. A copy for the admin's usage pages: the counters
 *                     are kept (and limits enforced) by the object that owns the subject, the
 *                     user's ExpertSession or the skill's SkillLimiter (limit_counters below), and
 *                     each object's alarm writes its changed rows here (absolute values) about a
 *                     second after a change, so no D1 statement runs on a call's path. (The objects
 *                     never read D1's rows back: on the day this design is first deployed, counting
 *                     restarts from zero and D1's rows of that day are overwritten.) Deleted by
 *                     the retention sweep once older than the longest retention.
 *   members           user_id → login, email, role, idp, first_seen_at, last_seen_at
 *                     (src/auth/member-directory.ts). Upserted at sign-in and at most once per
 *                     MEMBER_SEEN_INTERVAL_MS per user on API use; the admin's member list.
 *   service_clients   client_id → name, SHA-256 of the secret, skills (JSON), created_by/at, revoked_at
 *                     (src/auth/service-clients/service-client-store.ts): automation signing in with
 *                     OAuth client credentials (SEP-1046). D1, not KV: a revocation must hold at once.
 *   service_client_tokens  SHA-256 of an access token → client_id, expires_at; looked up on every
 *                     request with such a token (never the token itself).
 *   tool_pins         (skill, server_id, tool_name) → pinned hash + definition JSON, first_seen_at,
 *                     pinned_at/by, and a pending change (hash, definition JSON, seen_at) while the
 *                     live definition differs (src/downstream/tool-pins.ts). Written on the cold
 *                     listing path (the server's first listing pins; a change is withheld and recorded;
 *                     a tool added later is stored with pinned_hash '' and its definition pending,
 *                     unless the server sets auto_approve_new_tools) and by an admin's accept. D1, not KV: these are security decisions an admin reviews,
 *                     and KV is eventually consistent. Definitions are stored after secret redaction.
 *   run_index         run_id → one summary row per ended expert run of the tenant: skill, expert,
 *                     user id with the login/email from sign-in, outcome (`interrupted` for a run a
 *                     session restart cut off), trace id, times, tokens, tool calls, downstream bytes,
 *                     cost at the skill's catalog prices (NULL if unpriced), the budget that stopped it and its
 *                     calls refused for naming a tool the expert lacks (migrations/0005). Written by the
 *                     ExpertSession's alarm in batches from its run_index_outbox, about a second
 *                     after the run ends (never on the call's path), so admins list, filter and add
 *                     up runs across users; the trace itself stays in the session named by
 *                     (skill, user_id). Names, counts and times only: no arguments, results or texts.
 *   run_tool_calls    (run_id, seq) → one row per downstream tool call of an indexed run: skill, server,
 *                     tool, status, latency, bytes, the server's error (redacted, cut). Per-server usage.
 *
 * KV (binding CACHE) — read on the hot path (every MCP request needs its skill's experts):
 *   skill:<name>      CompiledSkill {name, version, config} of the live version. One key per skill
 *                     so that changing a skill rewrites only its own key. Written on save, on
 *                     restore and on a cache miss; deleted with the skill. KV is eventually
 *                     consistent across locations (up to about 60 s), which is why the version
 *                     travels with the config and runs record it.
 *   downstream-tools:<skill>:<serverId>:<configHash>  a downstream server's tool list
 *                     {tools, fetchedAt, expiresAt} (src/downstream/tool-list-cache.ts). The hash
 *                     of the server's config (headers as `${NAME}` templates, never values) makes a
 *                     config change a miss. Calls reuse it only until `expiresAt` (the TTL, which
 *                     may be 0: KV's own expirationTtl cannot go below 60 s); KV keeps it a week
 *                     as the server's last known definitions, which the expert tools' annotations
 *                     and `approve` argument are derived from on tools/list (a TTL-0 listing is
 *                     written only when it changed). Holds only the tools that passed
 *                     their pins, plus the names withheld and why; an admin's accept deletes every
 *                     key of that skill and server (downstreamToolsPrefix) so the next list re-checks.
 *   downstream-tools:<skill>:<serverId>:<configHash>:as:<team | user:<userId, URI-encoded>>  the same
 *                     for a server with `auth`: a server may list different tools (names,
 *                     descriptions, schemas) to different accounts, so a listing is cached per
 *                     account it was made as (the member, or the team for connection "team"),
 *                     never shared between members.
 *   downstream-up:<skill>:<serverId>:<configHash>  {at}: the server answered again at `at` (ms)
 *                     (src/downstream/server-recovery.ts). Written when a session's connect succeeds
 *                     after failures, or a health probe reaches the server; read only by a session
 *                     backing off from that server, which then retries at once instead of waiting
 *                     its back-off out (each user's session backs off on its own). Expires after 10 min.
 *   eval-report:<skill>:<expert>:<version, 8 digits>:<provider:model, URI-encoded>  the latest
 *                     eval results of an expert for one model on one catalog version
 *                     (src/admin/evals/eval-reports.ts): pass counts, tokens, cost, latency and the
 *                     failing evals' reasons; for the dashboard's evals page and its history across
 *                     versions. One key per model, so an eval command only writes (no read to
 *                     merge, no lost update between two commands). Written after each eval command
 *                     (not for a gated write's candidate), expiring after 90 days. Keys without the
 *                     model part hold every model of a version in one document (written before).
 *
 * KV (binding OAUTH_KV) — owned by @cloudflare/workers-oauth-provider (grants, clients, hashed tokens):
 *   slipsnisse-removed-member:<userId>  members removed by an admin (src/auth/member-removals.ts).
 *   slipsnisse-dashboard-session-ended:<sid>  a dashboard session signed out ({endedAt}), kept until
 *                     its cookie would expire (KV expirationTtl), so the old cookie is refused
 *                     (src/auth/dashboard-session-revocations.ts).
 *   slipsnisse-dashboard-sessions-ended:<userId>  the time (ms) before which every dashboard session
 *                     of the user ends: written when an admin revokes the member, kept one session
 *                     lifetime, after which every cookie issued before it has expired anyway.
 *                     Both are read on every dashboard request and the live socket's upgrade; KV,
 *                     like the removed-member mark, so a revoke reaches other locations within
 *                     KV's propagation (about 60 s), the location that wrote it at once.
 *
 *   slipsnisse-downstream-client:<sha256(server URL, redirect URL)>  the OAuth client Slipsnisse
 *                     registered at a downstream server (dynamic client registration), sealed with
 *                     CONNECTIONS_KEY (src/downstream/connections/connection-oauth-provider.ts).
 *                     Per server, not per member: every member's sign-in reuses it.
 *   slipsnisse-downstream-issuer:<sha256(server URL, client id)>  {issuer, pinnedAt}: the
 *                     authorization server a pre-registered client (auth.client_id_secret) was
 *                     first used with, when the catalog names none (auth.issuer); its id and
 *                     secret go to no other (src/downstream/connections/issuer-pin.ts). Written
 *                     once, never overwritten; not secret (an issuer URL).
 *
 * KV (binding OAUTH_KV) also holds the library's consent handles and upstream `state` (single use,
 * short TTL), written through its helpers in src/auth/auth-app.ts.
 *
 * Durable Object ExpertSession (SQLite, one per tenant+skill+user), schema and migrations in
 * src/experts/session/session-schema.ts:
 *   runs, run_steps   one row per expert call and per model step: the run's trace (caller, redacted
 *                     arguments, notes, answer excerpt, trace id; per step the model call and tool
 *                     calls with redacted argument and result excerpts).
 *   threads, thread_turns  follow-up conversations bound to the session's user.
 *   paused_runs            runs paused on an ask_back question or on calls awaiting approval, until
 *                          answered or decided (the turns, the waiting calls' arguments; no secrets).
 *   tasks                  expert calls run as MCP Tasks: status, the call's arguments (to resume
 *                     it after the user's reply) and its result, until the task's ttl runs out; the
 *                     Tasks protocol it was created through (v1 2025-11-25, v2 the 2026-07-28
 *                     extension) and, while it waits for its user, the paused run's question
 *                     (src/experts/protocol/task-store.ts).
 *   run_index_outbox       run_id → an ended run's D1 run_index row and run_tool_calls rows (JSON, the
 *                     same names, counts and times), with failed attempts and the retry time, until
 *                     the object's alarm writes them to D1 in batches
 *                     (src/experts/records/run-index-outbox.ts). Deleted once written; dropped
 *                     (logged) only if still unwritten when its run passes retention.
 *   limit_counters, limit_runs  this user's usage counters of the skill (limits.per_user) per UTC
 *                     day, with the version last copied to D1, and the runs holding an in-flight slot
 *                     (src/experts/limits/limit-counters.ts); days before yesterday are deleted once
 *                     in D1. A restart frees the slots (nothing runs in a fresh instance).
 *   request_states         SHA-256 of a 2026-07-28 `requestState` handle → the expert it was issued
 *                          for, the state it stands for (thread, reply kind, connect flow),
 *                          expires_at, used_at (src/experts/protocol/request-states.ts). Written when
 *                          a call answers input_required or asks to connect; used once by the retry,
 *                          which reaches this same session (no D1 on the call path). At most 256 live.
 *   call_streams           a resumable 2025-11-25 call stream's id → its run id, the client's request id
 *                     and progress token, and the run's deadline, so a resume after a restart gets the
 *                     run's outcome (src/experts/protocol/stream-records.ts); dropped ten minutes after
 *                     the deadline.
 *   session_migrations     which schema migrations this object has applied.
 *   KV limit-reservation:<runId>  { skill } while a run holds a slot in the skill's SkillLimiter
 *                     (src/experts/limits/run-limits.ts); the session's fresh instance frees what a
 *                     restart left there (the limiter frees it sooner when it needs the slot).
 *
 * Durable Object SkillLimiter (SQLite, one per tenant+skill), src/experts/limits/skill-limiter.ts:
 *   limit_counters, limit_runs  the skill-wide counters (limits.per_skill) and the runs holding a
 *                     slot, as above; every user's session reserves here with one RPC, and the
 *                     object's alarm copies changed rows to D1's usage_counters.
 *   limit_slot_holders  run id → the ExpertSession (id, hex) holding its slot, asked whether the
 *                     run still exists when a reservation is refused for runs_in_flight and once
 *                     per fresh instance; slots of runs it no longer has are freed
 *                     (src/experts/limits/slot-holders.ts).
 *
 * Durable Object UserConnections (SQLite, one per tenant and member, `<tenant>:user:<user id>`, and
 * one for the team, `<tenant>:team`), schema in src/downstream/connections/connection-schema.ts:
 *   connections       server URL → the member's connection to that downstream server (README
 *                     "Connections"): tokens and the client they belong to, sealed with AES-GCM
 *                     under the CONNECTIONS_KEY secret; server id, skill, scope and times in the
 *                     clear for the Connections page. Per member, not per ExpertSession, so one
 *                     sign-in serves the member's sessions of every skill naming that server.
 *   connect_flows     sign-ins in progress (connect link id, OAuth state, sealed PKCE verifier),
 *                     deleted 15 minutes after they expire.
 *   token_holders     server URL + ExpertSession id → until when that session may still hold
 *                     the token in memory (token-source.ts); a removal tells those sessions to
 *                     forget it.
 *   connection_migrations  which schema migrations this object has applied.
 *
 * Durable Object LegacySseSession (one per legacy SSE stream): nothing durable. It holds the
 * open stream and its MCP server in memory; a restart ends the stream and the client reconnects.
 *
 * Durable Object LiveRunFeed (SQLite, one per tenant), src/experts/live/live-run-feed.ts:
 *   live_runs         run_id → the run in flight as the dashboard's live page draws it (skill,
 *                     expert, user id and login, step, what the step does: names and counts only),
 *                     started/updated/ended times. So a page opened mid-run shows the runs in flight.
 *                     At most 200 in flight (the oldest dropped); a run is forgotten 15 minutes after
 *                     it started, an ended one 5 minutes after it ended (kept only so a late step
 *                     cannot bring it back); an alarm at the next expiry deletes them. The admins'
 *                     WebSockets are held by the runtime (hibernation API), each with its expiry.
 */

export const D1_TABLES = {
  catalogVersions: "catalog_versions",
  skills: "skills",
  toolPins: "tool_pins",
  runIndex: "run_index",
  runToolCalls: "run_tool_calls",
} as const;

export const KV_PREFIXES = {
  compiledSkill: "skill:",
  downstreamTools: "downstream-tools:",
  downstreamUp: "downstream-up:",
  evalReport: "eval-report:",
} as const;

/** KV key of an expert's eval results for one model on one catalog version; the padded version lists in order. */
export function evalReportKey(skill: string, expert: string, version: number, model: string): string {
  return `${evalReportPrefix(skill, expert)}${String(version).padStart(8, "0")}:${encodeURIComponent(model)}`;
}

/** Prefix of every eval report of one expert (all catalog versions). */
export function evalReportPrefix(skill: string, expert: string): string {
  return `${KV_PREFIXES.evalReport}${skill}:${expert}:`;
}

/** KV key of a skill's compiled catalog entry in CACHE. */
export function compiledSkillKey(skill: string): string {
  return `${KV_PREFIXES.compiledSkill}${skill}`;
}

/**
 * KV key of one downstream server's cached tool list in CACHE. `actingAs` (a server with `auth`:
 * whose account listed it, see connectionAccountKey) keeps one account's listing from serving another.
 */
export function downstreamToolsKey(skill: string, serverId: string, configHash: string, actingAs?: string): string {
  const key = `${KV_PREFIXES.downstreamTools}${skill}:${serverId}:${configHash}`;
  return actingAs === undefined ? key : `${key}:as:${actingAs}`;
}

/** KV key of the mark that a downstream server answered again (src/downstream/server-recovery.ts). */
export function downstreamUpKey(skill: string, serverId: string, configHash: string): string {
  return `${KV_PREFIXES.downstreamUp}${skill}:${serverId}:${configHash}`;
}

/** Prefix of every cached tool list of one server of one skill (all config hashes). */
export function downstreamToolsPrefix(skill: string, serverId: string): string {
  return `${KV_PREFIXES.downstreamTools}${skill}:${serverId}:`;
}

/** The D1 tables of usage limits and members (described above with every other table). */
export const TEAM_TABLES = {
  usageCounters: "usage_counters",
  members: "members",
  serviceClients: "service_clients",
  serviceClientTokens: "service_client_tokens",
} as const;

/** OAUTH_KV keys of ended dashboard sessions (described above). */
export const DASHBOARD_SESSION_KV_PREFIXES = {
  sessionEnded: "slipsnisse-dashboard-session-ended:",
  userSessionsEnded: "slipsnisse-dashboard-sessions-ended:",
} as const;

export function dashboardSessionEndedKey(sid: string): string {
  return `${DASHBOARD_SESSION_KV_PREFIXES.sessionEnded}${sid}`;
}

export function dashboardSessionsEndedKey(userId: string): string {
  return `${DASHBOARD_SESSION_KV_PREFIXES.userSessionsEnded}${userId}`;
}

/** The OAuth registration key prefix in OAUTH_KV (described above). */
export const DOWNSTREAM_CLIENT_PREFIX = "slipsnisse-downstream-client:";

/** OAUTH_KV key of the OAuth client registered at one downstream server for one redirect URL. */
export async function downstreamClientKey(serverUrl: string, redirectUrl: string): Promise<string> {
  return `${DOWNSTREAM_CLIENT_PREFIX}${await sha256Hex(`${serverUrl}\n${redirectUrl}`)}`;
}

/** The issuer-pin key prefix in OAUTH_KV (described above). */
export const DOWNSTREAM_ISSUER_PREFIX = "slipsnisse-downstream-issuer:";

/** OAUTH_KV key of the issuer a pre-registered client was first used with at one downstream server. */
export async function downstreamIssuerKey(serverUrl: string, clientId: string): Promise<string> {
  return `${DOWNSTREAM_ISSUER_PREFIX}${await sha256Hex(`${serverUrl}\n${clientId}`)}`;
}

async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((byte) => byte.toString(16).padStart(2, "0")).join("");
}
