import { env, runInDurableObject } from "cloudflare:test";
import type { ModelMessage } from "ai";
import { describe, expect, it } from "vitest";
import { ThreadOfAnotherExpertError, UnknownThreadError } from "../../../src/experts/session/session-errors";
import { SESSION_MIGRATIONS, applySessionSchema } from "../../../src/experts/session/session-schema";
import { ThreadStore } from "../../../src/experts/session/thread-store";

type LoggedSql = SqlStorage & { log: string[] };

/** The object's SqlStorage, recording each statement it is asked to run. */
function logged(sql: SqlStorage): LoggedSql {
  const log: string[] = [];
  return new Proxy(sql, {
    get(target, key) {
      if (key === "log") return log;
      if (key === "exec")
        return (query: string, ...bindings: unknown[]) => {
          log.push(query);
          return target.exec(query, ...bindings);
        };
      const value: unknown = Reflect.get(target, key, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  }) as LoggedSql;
}

function withStore<T>(name: string, use: (store: ThreadStore, sql: LoggedSql) => T): Promise<T> {
  const stub = env.EXPERT_SESSION.get(env.EXPERT_SESSION.idFromName(`thread-store:${name}`));
  return runInDurableObject(stub, (_instance, state) => {
    applySessionSchema(state.storage);
    const sql = logged(state.storage.sql);
    return use(new ThreadStore(sql), sql);
  });
}

/** The thread's running total beside the sum of the turns it still holds. */
function totalsOf(sql: SqlStorage, id: string): { total: number; sum: number } {
  const total = sql.exec<{ t: number }>(`SELECT approx_tokens AS t FROM threads WHERE id = ?`, id).one().t;
  const sum = sql.exec<{ s: number }>(`SELECT COALESCE(SUM(approx_tokens), 0) AS s FROM thread_turns WHERE thread_id = ?`, id).one().s;
  return { total, sum };
}

const turn = (i: number): ModelMessage[] => [
  { role: "user", content: `question ${i} ${"x".repeat(400)}` },
  { role: "assistant", content: [{ type: "tool-call", toolCallId: `c${i}`, toolName: "docs__search", input: { q: i } }] },
  { role: "tool", content: [{ type: "tool-result", toolCallId: `c${i}`, toolName: "docs__search", output: { type: "text", value: "y".repeat(400) } }] },
  { role: "assistant", content: `answer ${i}` },
];

describe("thread store", () => {
  it("keeps the newest turns within the token budget and always starts at a user turn", async () => {
    const history = await withStore("trim", (store) => {
      const id = store.create("expert", 1);
      for (let i = 0; i < 10; i++) store.append(id, turn(i), 2 + i, { maxTokens: 600 });
      return store.history(id, "expert");
    });
    expect(history[0]?.role).toBe("user");
    expect(JSON.stringify(history).length / 4).toBeLessThanOrEqual(600);
    expect(JSON.stringify(history)).toContain("answer 9");
    expect(JSON.stringify(history)).not.toContain("answer 0");
    // No tool result is left without the assistant call that produced it.
    const calls = history.flatMap((m) => (m.role === "assistant" && Array.isArray(m.content) ? m.content : []));
    const results = history.flatMap((m) => (m.role === "tool" ? m.content : []));
    expect(results.length).toBe(calls.length);
  });

  it("trims a new thread whose first turns alone exceed the budget", async () => {
    const history = await withStore("fresh-over-budget", (store) => {
      const id = store.create("expert", 1);
      store.append(id, [...turn(0), ...turn(1)], 2, { maxTokens: 300 });
      return store.history(id, "expert");
    });
    expect(history[0]?.role).toBe("user");
    expect(JSON.stringify(history)).toContain("answer 1");
    expect(JSON.stringify(history)).not.toContain("answer 0");
  });

  it("continues a thread's turn order across store instances (a restarted session)", async () => {
    const id = await withStore("restart", (store) => {
      const minted = store.create("expert", 1);
      store.append(minted, turn(0), 2);
      return minted;
    });
    const history = await withStore("restart", (store) => {
      store.append(id, turn(1), 3);
      return store.history(id, "expert");
    });
    expect(history.map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant", "user", "assistant", "tool", "assistant"]);
    expect(JSON.stringify(history.at(-1))).toContain("answer 1");
  });

  it("keeps a running token total per thread equal to the turns it holds, through appends and trims", async () => {
    const totals = await withStore("running-total", (store, sql) => {
      const id = store.create("expert", 1);
      const seen: Array<{ total: number; sum: number }> = [];
      for (let i = 0; i < 6; i++) {
        store.append(id, turn(i), 2 + i, { maxTokens: 700 });
        seen.push(totalsOf(sql, id));
      }
      return seen;
    });
    for (const { total, sum } of totals) expect(total).toBe(sum);
    expect(totals.at(-1)?.total).toBeGreaterThan(0);
    expect(totals.at(-1)?.total).toBeLessThanOrEqual(700);
  });

  it("does not read a thread's turns to trim while its running total is within budget", async () => {
    const statements = await withStore("no-scan", (store, sql) => {
      const id = store.create("expert", 1);
      store.append(id, turn(0), 2);
      sql.log.length = 0;
      store.append(id, turn(1), 3);
      return [...sql.log];
    });
    expect(statements.filter((statement) => /SELECT[^;]*approx_tokens[^;]*FROM thread_turns/is.test(statement))).toEqual([]);
  });

  it("backfills the running total of a thread written by the schema before it, and trims from it", async () => {
    const stub = env.EXPERT_SESSION.get(env.EXPERT_SESSION.idFromName("thread-store:old-schema"));
    const after = await runInDurableObject(stub, (_instance, state) => {
      const sql = state.storage.sql;
      for (const table of ["thread_turns", "threads", "run_steps", "runs", "tasks", "session_migrations"]) sql.exec(`DROP TABLE IF EXISTS ${table}`);
      // The schema before the running total (every migration before the one that adds it), with a thread of 3 turns.
      const runningTotal = SESSION_MIGRATIONS.findIndex((statements) => statements.some((statement) => statement.includes("ADD COLUMN approx_tokens")));
      sql.exec(`CREATE TABLE session_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)`);
      SESSION_MIGRATIONS.slice(0, runningTotal).forEach((statements, index) => {
        for (const statement of statements) sql.exec(statement);
        sql.exec(`INSERT INTO session_migrations (version, applied_at) VALUES (?, 1)`, index + 1);
      });
      sql.exec(`INSERT INTO threads (id, expert, created_at, updated_at) VALUES ('th_old', 'e', 1, 1)`);
      for (const [seq, message] of turn(0).entries()) {
        sql.exec(
          `INSERT INTO thread_turns (thread_id, seq, role, message, approx_tokens) VALUES ('th_old', ?, ?, ?, 120)`,
          seq,
          message.role,
          JSON.stringify(message),
        );
      }
      applySessionSchema(state.storage);
      const store = new ThreadStore(sql);
      const backfilled = totalsOf(sql, "th_old");
      store.append("th_old", turn(1), 2, { maxTokens: 600 });
      return { backfilled, trimmed: totalsOf(sql, "th_old"), history: store.history("th_old", "e") };
    });
    expect(after.backfilled).toEqual({ total: 480, sum: 480 });
    expect(after.trimmed.total).toBe(after.trimmed.sum);
    expect(after.trimmed.total).toBeLessThanOrEqual(600);
    expect(JSON.stringify(after.history)).toContain("answer 1");
    expect(JSON.stringify(after.history)).not.toContain("answer 0");
  });

  it("keeps at most max_messages, starting at a user turn, and the token total follows", async () => {
    const kept = await withStore("message-bound", (store, sql) => {
      const id = store.create("expert", 1);
      for (let i = 0; i < 5; i++) store.append(id, turn(i), 2 + i, { maxTokens: 1_000_000, maxMessages: 10 });
      return { history: store.history(id, "expert"), totals: totalsOf(sql, id) };
    });
    // 20 messages written, 10 allowed: the newest 10 cut back to a user turn are the last two turns.
    expect(kept.history).toHaveLength(8);
    expect(kept.history[0]?.role).toBe("user");
    expect(JSON.stringify(kept.history[0])).toContain("question 3");
    expect(kept.totals.total).toBe(kept.totals.sum);
  });

  it("applies each expert's own token bound to its threads", async () => {
    const sizes = await withStore("per-expert-tokens", (store) => {
      const small = store.create("terse", 1);
      const large = store.create("chatty", 1);
      for (let i = 0; i < 6; i++) {
        store.append(small, turn(i), 2 + i, { maxTokens: 400 });
        store.append(large, turn(i), 2 + i, { maxTokens: 100_000 });
      }
      return { small: store.history(small, "terse").length, large: store.history(large, "chatty").length };
    });
    expect(sizes.large).toBe(24);
    expect(sizes.small).toBe(4);
  });

  it("refuses a thread to an expert that did not start it", async () => {
    const refusal = await withStore("other-expert", (store) => {
      const id = store.create("librarian", 1);
      store.append(id, turn(0), 2);
      try {
        store.history(id, "translator");
        return null;
      } catch (error) {
        return error;
      }
    });
    expect(refusal).toBeInstanceOf(ThreadOfAnotherExpertError);
    expect(String(refusal)).toContain('belongs to expert "librarian", not "translator"');
  });

  it("refuses a handle it never minted", async () => {
    await expect(withStore("unknown", (store) => store.history("th_forged", "expert"))).rejects.toThrow(UnknownThreadError);
  });

  it("stores a run's turns in one statement, and a run of 45 turns in chunks within the bound parameters a statement takes", async () => {
    await withStore("one-insert", (store, sql) => {
      const id = store.create("docs", 1);
      sql.log.length = 0;
      store.append(id, turn(0), 2);
      expect(sql.log.filter((query) => query.startsWith("INSERT INTO thread_turns"))).toHaveLength(1);
      const long: ModelMessage[] = [
        { role: "user", content: "go" },
        ...Array.from({ length: 44 }, (_, i): ModelMessage => ({ role: "assistant", content: `step ${i}` })),
      ];
      sql.log.length = 0;
      store.append(id, long, 3, { maxMessages: 1_000, maxTokens: 1_000_000 });
      expect(sql.log.filter((query) => query.startsWith("INSERT INTO thread_turns"))).toHaveLength(3);
      const history = store.history(id, "docs");
      expect(history).toHaveLength(4 + 45);
      expect(history.at(-1)).toEqual({ role: "assistant", content: "step 43" });
    });
  });
  it("writes a new thread once, at its run's end: with its first turns, or alone for a run that ended without any", async () => {
    await withStore("written-once", (store, sql) => {
      sql.log.length = 0;
      const answered = store.create("docs", 1);
      const failed = store.create("docs", 1);
      // Minting writes nothing: a run cut off before its end leaves no row (its handle never reached the client).
      expect(sql.log).toEqual([]);
      expect(() => store.history(answered, "docs")).toThrow(UnknownThreadError);

      store.append(answered, turn(0), 2);
      expect(sql.log.filter((query) => query.startsWith("INSERT INTO threads"))).toHaveLength(1);
      expect(sql.log.filter((query) => query.startsWith("UPDATE threads"))).toEqual([]);
      expect(totalsOf(sql, answered).total).toBe(totalsOf(sql, answered).sum);
      store.keep(answered, 2);
      expect(sql.log.filter((query) => query.startsWith("INSERT INTO threads"))).toHaveLength(1);

      // An error or a pause: no turns, but the handle the caller got must work for the next call.
      store.keep(failed, 3);
      expect(store.history(failed, "docs")).toEqual([]);
      expect(() => store.history(failed, "other")).toThrow(ThreadOfAnotherExpertError);
      store.append(failed, turn(1), 4);
      expect(store.history(failed, "docs")).toHaveLength(4);
      expect(totalsOf(sql, failed).total).toBe(totalsOf(sql, failed).sum);
    });
  });
});
