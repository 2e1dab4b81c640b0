/**
 * Which legacy SSE streams of one user and skill had calls in flight lately, kept in a
 * LegacySseSession object of its own (named by `streamIndexName`). A reconnecting SDK client
 * sends no `Last-Event-ID` (both SDKs' SSEClientTransport replace the EventSource's headers with
 * their own: @modelcontextprotocol/sdk dist/esm/client/sse.js, the `fetch` given to
 * `new EventSource`), so the new stream finds the one it continues here. Keyed by the user:
 * another user's streams are never in it.
 */

/** Streams listed per user and skill; the least recently noted go first. */
export const MAX_INDEXED_CONNECTIONS = 16;

interface IndexedStream {
  sessionId: string;
  until: number;
}

const KEY = "sse-stream-index";

export function streamIndexName(skill: string, userId: string): string {
  return `streams:${skill}:${userId}`;
}

export class SseStreamIndex {
  constructor(private readonly storage: DurableObjectStorage) {}

  /** Returns the time the storage should be swept at. */
  note(sessionId: string, until: number, now = Date.now()): number {
    const kept = this.live(now).filter((entry) => entry.sessionId !== sessionId);
    const entries = [...kept, { sessionId, until }].slice(-MAX_INDEXED_CONNECTIONS);
    this.storage.kv.put(KEY, entries);
    return Math.max(...entries.map((entry) => entry.until));
  }

  recent(now = Date.now()): string[] {
    return this.live(now).map((entry) => entry.sessionId);
  }

  /** True when nothing is left to keep. */
  sweep(now = Date.now()): boolean {
    const entries = this.live(now);
    if (entries.length === 0) this.storage.kv.delete(KEY);
    else this.storage.kv.put(KEY, entries);
    return entries.length === 0;
  }

  private live(now: number): IndexedStream[] {
    return (this.storage.kv.get<IndexedStream[]>(KEY) ?? []).filter((entry) => entry.until > now);
  }
}
