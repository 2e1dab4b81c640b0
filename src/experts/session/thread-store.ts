import { modelMessageSchema, type ModelMessage } from "ai";
import { base64Url } from "../../base64url";
import { UnknownThreadError } from "../runner-errors";

/** Thread history kept per thread; older turns are dropped first. About 4 characters a token. */
export const THREAD_TOKEN_BUDGET = 6_000;
const CHARS_PER_TOKEN = 4;

export class ThreadStore {
  /**
   * Threads minted by this instance that have no turns yet: their first append needs no MAX(seq)
   * lookup (a statement of every new conversation's bookkeeping). Lost on restart, which only
   * costs that statement.
   */
  private readonly fresh = new Set<string>();

  constructor(private readonly sql: SqlStorage) {}

  /** Threads are minted here, never taken from the client, so a handle cannot be guessed into. */
  create(expert: string, now: number): string {
    const id = `th_${randomId()}`;
    this.sql.exec(`INSERT INTO threads (id, expert, created_at, updated_at) VALUES (?, ?, ?, ?)`, id, expert, now, now);
    this.fresh.add(id);
    return id;
  }

  /** The thread's history; throws UnknownThreadError when this session never minted it. */
  history(threadId: string): ModelMessage[] {
    const exists = this.sql.exec(`SELECT 1 FROM threads WHERE id = ?`, threadId).toArray().length > 0;
    if (!exists) throw new UnknownThreadError(threadId);
    return this.sql
      .exec<{ message: string }>(`SELECT message FROM thread_turns WHERE thread_id = ? ORDER BY seq`, threadId)
      .toArray()
      .flatMap((row) => {
        const parsed = modelMessageSchema.safeParse(JSON.parse(row.message));
        return parsed.success ? [parsed.data] : [];
      });
  }

  append(threadId: string, messages: readonly ModelMessage[], now: number, budget = THREAD_TOKEN_BUDGET): void {
    const fresh = this.fresh.delete(threadId);
    const last = fresh
      ? -1
      : (this.sql.exec<{ seq: number | null }>(`SELECT MAX(seq) AS seq FROM thread_turns WHERE thread_id = ?`, threadId).one().seq ?? -1);
    let tokens = 0;
    messages.forEach((message, i) => {
      const json = JSON.stringify(message);
      const approx = Math.ceil(json.length / CHARS_PER_TOKEN);
      tokens += approx;
      this.sql.exec(
        `INSERT INTO thread_turns (thread_id, seq, role, message, approx_tokens) VALUES (?, ?, ?, ?, ?)`,
        threadId, last + 1 + i, message.role, json, approx,
      );
    });
    const total = this.sql
      .exec<{ approx_tokens: number }>(
        `UPDATE threads SET updated_at = ?, approx_tokens = approx_tokens + ? WHERE id = ? RETURNING approx_tokens`,
        now, tokens, threadId,
      )
      .one().approx_tokens;
    if (total > budget) this.trim(threadId, total, budget);
  }

  /**
   * Drops the oldest turns until the rest fit the budget, never cutting between an assistant tool
   * call and its result. Reads turns oldest first and stops once the remainder fits, so only the
   * turns it drops (and the one after) are read.
   */
  private trim(threadId: string, total: number, budget: number): void {
    let remaining = total;
    let cutoff: number | null = null;
    const oldestFirst = this.sql.exec<{ seq: number; approx_tokens: number }>(
      `SELECT seq, approx_tokens FROM thread_turns WHERE thread_id = ? ORDER BY seq`,
      threadId,
    );
    for (const row of oldestFirst) {
      if (remaining <= budget) break;
      cutoff = row.seq;
      remaining -= row.approx_tokens;
    }
    if (cutoff === null) return;
    // Keep history starting at a user turn so no orphaned tool result opens the thread.
    const firstUser = this.sql
      .exec<{ seq: number | null }>(`SELECT MIN(seq) AS seq FROM thread_turns WHERE thread_id = ? AND seq > ? AND role = 'user'`, threadId, cutoff)
      .one().seq;
    const dropped = this.sql
      .exec<{ approx_tokens: number }>(`DELETE FROM thread_turns WHERE thread_id = ? AND seq < ? RETURNING approx_tokens`, threadId, firstUser ?? cutoff + 1)
      .toArray()
      .reduce((sum, row) => sum + row.approx_tokens, 0);
    this.sql.exec(`UPDATE threads SET approx_tokens = approx_tokens - ? WHERE id = ?`, dropped, threadId);
  }
}

function randomId(): string {
  return base64Url(crypto.getRandomValues(new Uint8Array(16)));
}
