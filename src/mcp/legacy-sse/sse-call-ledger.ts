/**
 * The `tools/call` requests in flight on one legacy SSE stream, kept in the stream's
 * Durable Object storage: a restart (a deploy, an eviction, `npm start` restarted) loses the
 * stream and the memory, and the client's EventSource then reconnects with a new GET. That new
 * stream answers the cut requests by id (sse-hand-over.ts), so no call waits for the
 * client's own timeout. Bounded in count and time; an entry goes when its call is answered.
 */

/** A stream has at most this many calls remembered; the oldest go first (per-skill limits keep real counts far lower). */
export const MAX_REMEMBERED_CALLS = 32;
/** A call is remembered for its expert's budget plus this; after it no reconnect answers it. */
export const REMEMBER_AFTER_BUDGET_MS = 60_000;

export interface LedgerCall {
  /** The client's JSON-RPC id of the `tools/call`. */
  requestId: string | number;
  runId: string;
  /** Whether the expert has an output schema (the answer's shape: structuredContent). */
  structured: boolean;
  /** The run's end at the latest (start + budget), and the entry's expiry after it. */
  deadline: number;
  expiresAt: number;
}

/** What the stream's client said in `initialize`, for the stream that continues it (no second `initialize` comes). */
export interface LedgerInitialize {
  protocolVersion?: string;
  capabilities?: Record<string, unknown>;
}

export interface LedgerIdentity {
  /** The user who opened the stream: only they may take its calls over. */
  owner: string;
  /** A digest of the credential the stream was opened with ("" without one), to tell one user's clients apart. */
  client: string;
  initialize?: LedgerInitialize;
}

interface LedgerState extends LedgerIdentity {
  calls: LedgerCall[];
}

const KEY = "sse-call-ledger";

export class SseCallLedger {
  constructor(private readonly storage: DurableObjectStorage) {}

  /**
   * A call started on the stream of `identity` (written with the first call: a stream
   * that never has a call in flight stores nothing). Returns the latest expiry, when the storage
   * is to be swept.
   */
  record(call: LedgerCall, identity: LedgerIdentity, now = Date.now()): number {
    const state = this.read() ?? { ...identity, calls: [] };
    const calls = [...state.calls.filter((kept) => kept.expiresAt > now && kept.requestId !== call.requestId), call].slice(-MAX_REMEMBERED_CALLS);
    this.write({ ...state, calls });
    return Math.max(...calls.map((kept) => kept.expiresAt));
  }

  /** The call was answered on its own stream: nothing to hand over (and nothing stored once no call is in flight). */
  settle(requestId: string | number): void {
    const state = this.read();
    if (!state?.calls.some((call) => call.requestId === requestId)) return;
    const calls = state.calls.filter((call) => call.requestId !== requestId);
    if (calls.length === 0) this.clear();
    else this.write({ ...state, calls });
  }

  /**
   * The calls a reconnect may take over: only the owner's, and with `client` given, only when the
   * stream was opened with the same credential. Read only; `take` removes them.
   */
  cut(userId: string, client: string | undefined, now = Date.now()): LedgerCall[] {
    const state = this.read();
    if (!state || state.owner !== userId || (client !== undefined && state.client !== client)) return [];
    return state.calls.filter((call) => call.expiresAt > now);
  }

  take(userId: string, client: string | undefined, now = Date.now()): { calls: LedgerCall[]; initialize?: LedgerInitialize } {
    const calls = this.cut(userId, client, now);
    const state = this.read();
    if (calls.length === 0 || !state) return { calls: [] };
    this.clear();
    return { calls, ...(state.initialize ? { initialize: state.initialize } : {}) };
  }

  /** Drops expired calls; true when nothing is left to keep. */
  sweep(now = Date.now()): boolean {
    const state = this.read();
    if (!state) return true;
    const calls = state.calls.filter((call) => call.expiresAt > now);
    if (calls.length === 0) {
      this.clear();
      return true;
    }
    if (calls.length !== state.calls.length) this.write({ ...state, calls });
    return false;
  }

  clear(): void {
    this.storage.kv.delete(KEY);
  }

  private read(): LedgerState | undefined {
    return this.storage.kv.get<LedgerState>(KEY);
  }

  private write(state: LedgerState): void {
    this.storage.kv.put(KEY, state);
  }
}
