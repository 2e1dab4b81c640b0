import { modelMessageSchema, type ModelMessage } from "ai";
import { base64Url } from "../../base64url";
import type { ExpertConfig } from "../../catalog/catalog-schema";
import { redactDeep } from "../../downstream/secret-headers";
import type { ExpertRunResult } from "../core/run-types";
import type { Redact } from "../core/trace-excerpt";
import { ThreadOfAnotherExpertError, UnknownThreadError } from "./session-errors";

/**
 * How much history a thread keeps; older turns are dropped first. Set per expert in the catalog
 * (`history`); the defaults are what a typical chat backend keeps. About 4 characters a token.
 */
export interface HistoryBounds {
  maxTokens: number;
  maxMessages: number;
}
export const DEFAULT_HISTORY_BOUNDS: HistoryBounds = { maxTokens: 30_000, maxMessages: 50 };
const CHARS_PER_TOKEN = 4;
/** Turns per INSERT: five bound parameters each, within a Durable Object SQL statement's 100. */
const TURNS_PER_INSERT = 20;

/** A call's thread: its id (null when the handle was refused) and the turns it continues from. */
export interface OpenedThread {
  threadId: string | null;
  history: ModelMessage[];
  refused?: UnknownThreadError | ThreadOfAnotherExpertError;
}

/** A thread minted for a run still going: what its row is written with at the run's end. */
type FreshThread = { expert: string; createdAt: number };

export class ThreadStore {
  /**
   * Threads minted by this instance for a run still going, not yet stored: the run's end writes
   * the row with its first turns (`append`) or alone (`keep`), one statement where a row written
   * at the start and updated at the end were two, and the first append needs no MAX(seq) lookup.
   * A restart loses the entry with the run it belonged to: that call never answered, so its
   * handle never reached the client.
   */
  private readonly fresh = new Map<string, FreshThread>();

  constructor(private readonly sql: SqlStorage) {}

  /** Threads are minted here, never taken from the client, so a handle cannot be guessed into. */
  create(expert: string, now: number): string {
    const id = `th_${randomId()}`;
    this.fresh.set(id, { expert, createdAt: now });
    return id;
  }

  /**
   * The thread a call continues, or the one it starts. A handle this session never minted
   * (another user's, or a guess) is refused before the run row, so it is neither stored in this
   * user's records nor handed back as theirs; a new conversation's thread is minted before the
   * run row so the record names it.
   */
  open(thread: string | undefined, expert: string, now: number): OpenedThread {
    if (thread === undefined) return { threadId: this.create(expert, now), history: [] };
    try {
      return { threadId: thread, history: this.history(thread, expert) };
    } catch (error) {
      if (!(error instanceof UnknownThreadError || error instanceof ThreadOfAnotherExpertError)) throw error;
      return { threadId: null, history: [], refused: error };
    }
  }

  /**
   * A run's end: its new turns are stored, redacted (no secret the caller or the model echoed may
   * stay in them); a thread it started is stored with them, or here without any (an error, a
   * pause): its handle must work.
   */
  afterRun(threadId: string | null, result: ExpertRunResult, redact: Redact, expert: ExpertConfig, now: number): void {
    if (threadId === null) return;
    if (result.outcome !== "error" && result.outcome !== "paused" && result.messages.length > 0) {
      const bounds = { maxTokens: expert.history.max_tokens, maxMessages: expert.history.max_messages };
      this.append(threadId, redactDeep(result.messages, redact), now, bounds);
    }
    this.keep(threadId, now);
  }

  /** Stores a thread minted for a run that ended without turns to add (an error, a pause), so its handle works. */
  keep(threadId: string, now: number): void {
    const fresh = this.takeFresh(threadId);
    if (fresh) this.insert(threadId, fresh, now, 0);
  }

  /** The thread's entry in `fresh`, which it leaves: the caller writes its row now. */
  private takeFresh(threadId: string): FreshThread | undefined {
    const fresh = this.fresh.get(threadId);
    this.fresh.delete(threadId);
    return fresh;
  }

  private insert(threadId: string, fresh: FreshThread, now: number, tokens: number): void {
    this.sql.exec(
      `INSERT INTO threads (id, expert, created_at, updated_at, approx_tokens) VALUES (?, ?, ?, ?, ?)`,
      threadId,
      fresh.expert,
      fresh.createdAt,
      now,
      tokens,
    );
  }

  /**
   * The thread's history; throws UnknownThreadError when this session never minted it, and
   * ThreadOfAnotherExpertError when another expert started it: its turns hold that expert's
   * prompt, tool results and possibly another provider's messages, none of which this expert may see.
   */
  history(threadId: string, expert: string): ModelMessage[] {
    const owner = this.sql.exec<{ expert: string }>(`SELECT expert FROM threads WHERE id = ?`, threadId).toArray()[0];
    if (!owner) throw new UnknownThreadError(threadId);
    if (owner.expert !== expert) throw new ThreadOfAnotherExpertError(threadId, owner.expert, expert);
    return this.sql
      .exec<{ message: string }>(`SELECT message FROM thread_turns WHERE thread_id = ? ORDER BY seq`, threadId)
      .toArray()
      .flatMap((row) => {
        const parsed = modelMessageSchema.safeParse(JSON.parse(row.message));
        return parsed.success ? [parsed.data] : [];
      });
  }

  append(threadId: string, messages: readonly ModelMessage[], now: number, limits: Partial<HistoryBounds> = {}): void {
    const bounds = { ...DEFAULT_HISTORY_BOUNDS, ...limits };
    const fresh = this.takeFresh(threadId);
    const last = fresh ? -1 : (this.sql.exec<{ seq: number | null }>(`SELECT MAX(seq) AS seq FROM thread_turns WHERE thread_id = ?`, threadId).one().seq ?? -1);
    let tokens = 0;
    const rows = messages.map((message, i) => {
      const json = JSON.stringify(message);
      const approx = Math.ceil(json.length / CHARS_PER_TOKEN);
      tokens += approx;
      return [threadId, last + 1 + i, message.role, json, approx];
    });
    // One statement for a run's turns (each statement is a call into SQLite on the run's path),
    // in chunks within the 100 bound parameters a Durable Object's SQL takes.
    for (let start = 0; start < rows.length; start += TURNS_PER_INSERT) {
      const chunk = rows.slice(start, start + TURNS_PER_INSERT);
      this.sql.exec(
        `INSERT INTO thread_turns (thread_id, seq, role, message, approx_tokens) VALUES ${chunk.map(() => "(?, ?, ?, ?, ?)").join(", ")}`,
        ...chunk.flat(),
      );
    }
    let total = tokens;
    if (fresh) this.insert(threadId, fresh, now, tokens);
    else {
      total = this.sql
        .exec<{ approx_tokens: number }>(
          `UPDATE threads SET updated_at = ?, approx_tokens = approx_tokens + ? WHERE id = ? RETURNING approx_tokens`,
          now,
          tokens,
          threadId,
        )
        .one().approx_tokens;
    }
    // Turn seqs are contiguous (only the oldest are ever dropped), so the newest seq tells
    // without a count whether the thread ever held more messages than the bound.
    const newest = last + messages.length;
    if (total > bounds.maxTokens || newest >= bounds.maxMessages) this.trim(threadId, total, bounds, newest);
  }

  /**
   * Drops the oldest turns until the rest fit both bounds, never cutting between an assistant tool
   * call and its result. Reads turns oldest first and stops once the remainder fits, so only the
   * turns it drops (and the one after) are read.
   */
  private trim(threadId: string, total: number, bounds: HistoryBounds, newest: number): void {
    let remaining = total;
    let cutoff: number | null = null;
    const oldestFirst = this.sql.exec<{ seq: number; approx_tokens: number }>(
      `SELECT seq, approx_tokens FROM thread_turns WHERE thread_id = ? ORDER BY seq`,
      threadId,
    );
    for (const row of oldestFirst) {
      if (remaining <= bounds.maxTokens && row.seq > newest - bounds.maxMessages) break;
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
