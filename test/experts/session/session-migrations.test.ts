import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { SESSION_MIGRATIONS, applySessionSchema } from "../../../src/experts/session/session-schema";
import { ThreadStore } from "../../../src/experts/session/thread-store";

function stub(name: string) {
  return env.EXPERT_SESSION.get(env.EXPERT_SESSION.idFromName(`migrations:${name}`));
}

describe("session schema migrations", () => {
  it("brings a session created by the first schema up to date without losing its threads", async () => {
    const history = await runInDurableObject(stub("v1"), (_instance, state) => {
      const sql = state.storage.sql;
      // A session as the first release left it: v1 tables, data, no migration ledger.
      for (const table of ["thread_turns", "threads", "run_steps", "runs", "tasks", "session_migrations"]) sql.exec(`DROP TABLE IF EXISTS ${table}`);
      for (const statement of SESSION_MIGRATIONS[0] ?? []) sql.exec(statement);
      sql.exec(`INSERT INTO threads (id, expert, created_at, updated_at) VALUES ('th_old', 'e', 1, 1)`);
      sql.exec(
        `INSERT INTO thread_turns (thread_id, seq, message, approx_tokens) VALUES ('th_old', 0, ?, 5)`,
        JSON.stringify({ role: "user", content: "old question" }),
      );
      sql.exec(
        `INSERT INTO thread_turns (thread_id, seq, message, approx_tokens) VALUES ('th_old', 1, ?, 5)`,
        JSON.stringify({ role: "assistant", content: "old answer" }),
      );

      applySessionSchema(state.storage);
      const roles = sql
        .exec<{ role: string }>(`SELECT role FROM thread_turns ORDER BY seq`)
        .toArray()
        .map((row) => row.role);
      expect(roles).toEqual(["user", "assistant"]);
      return new ThreadStore(sql).history("th_old", "e");
    });
    expect(history).toEqual([
      { role: "user", content: "old question" },
      { role: "assistant", content: "old answer" },
    ]);
  });

  it("renames runs an older release closed as an interrupted error to interrupted, as the index has them", async () => {
    const outcomes = await runInDurableObject(stub("interrupted"), (_instance, state) => {
      const sql = state.storage.sql;
      const renaming = SESSION_MIGRATIONS.findIndex((statements) => statements.some((statement) => statement.includes("SET outcome = 'interrupted'")));
      expect(renaming).toBeGreaterThan(0);
      // A session as the release before the rename left it: every migration up to it, none after.
      for (const table of ["thread_turns", "threads", "run_steps", "runs", "tasks", "session_migrations"]) sql.exec(`DROP TABLE IF EXISTS ${table}`);
      sql.exec(`CREATE TABLE session_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)`);
      SESSION_MIGRATIONS.slice(0, renaming).forEach((statements, index) => {
        for (const statement of statements) sql.exec(statement);
        sql.exec(`INSERT INTO session_migrations (version, applied_at) VALUES (?, 1)`, index + 1);
      });
      const insert = `INSERT INTO runs (id, skill, expert, user_id, provider, outcome, error, started_at) VALUES (?, 's', 'e', 'u', 'p', 'error', ?, 1)`;
      sql.exec(insert, "cut", "interrupted: the session restarted during the run");
      sql.exec(insert, "failed", "The model answered 500.");
      applySessionSchema(state.storage);
      return sql.exec<{ id: string; outcome: string }>(`SELECT id, outcome FROM runs WHERE id IN ('cut', 'failed') ORDER BY id`).toArray();
    });
    expect(outcomes).toEqual([
      { id: "cut", outcome: "interrupted" },
      { id: "failed", outcome: "error" },
    ]);
  });

  it("is idempotent: a restarted object applies nothing twice", async () => {
    const versions = await runInDurableObject(stub("twice"), (_instance, state) => {
      applySessionSchema(state.storage);
      applySessionSchema(state.storage);
      return state.storage.sql
        .exec<{ version: number }>(`SELECT version FROM session_migrations ORDER BY version`)
        .toArray()
        .map((row) => row.version);
    });
    expect(versions).toEqual(SESSION_MIGRATIONS.map((_statements, index) => index + 1));
  });
});
