import type { ResumableStreamRef } from "../core/call-types";

/** A resumable call stream as the session's SQLite keeps it: what a resume needs to answer after a restart. */
export interface StreamRecord {
  ref: ResumableStreamRef;
  runId: string;
  openedAt: number;
  /** When the run must have ended (its budget's timeout and a grace): a resumed stream waits no longer. */
  deadlineAt: number;
}

type StreamRow = {
  id: string;
  run_id: string;
  request_id: string;
  progress_token: string | null;
  structured_expected: number;
  opened_at: number;
  deadline_at: number;
};

/** The table, created by the session's migration (session-schema.ts). */
export const CALL_STREAMS_TABLE = [
  `CREATE TABLE IF NOT EXISTS call_streams (
     id TEXT PRIMARY KEY,
     run_id TEXT NOT NULL,
     request_id TEXT NOT NULL,
     progress_token TEXT,
     structured_expected INTEGER NOT NULL,
     opened_at INTEGER NOT NULL,
     deadline_at INTEGER NOT NULL
   )`,
  `CREATE INDEX IF NOT EXISTS call_streams_deadline ON call_streams (deadline_at)`,
] as const;

/**
 * Which run (and which JSON-RPC request of the client) each resumable stream id belongs to, in
 * SQLite: the events themselves live in memory, but a restart must not turn a resume into a 404
 * while the run's record says it was interrupted. One row per 2025-11-25 SSE tools/call, kept
 * until a while after the run's deadline. The request id and progress token keep their JSON type.
 */
export class StreamRecords {
  constructor(private readonly sql: SqlStorage) {}

  add(ref: ResumableStreamRef, runId: string, openedAt: number, deadlineAt: number): void {
    const requestId = JSON.stringify(ref.requestId);
    const progressToken = ref.progressToken === undefined ? null : JSON.stringify(ref.progressToken);
    // Both are the client's to choose: an outsized one is not kept (a resume after a restart then finds nothing).
    if (requestId.length > MAX_ID_CHARS || (progressToken?.length ?? 0) > MAX_ID_CHARS) return;
    this.sql.exec(
      `INSERT OR REPLACE INTO call_streams (id, run_id, request_id, progress_token, structured_expected, opened_at, deadline_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
      ref.id,
      runId,
      requestId,
      progressToken,
      ref.structuredExpected ? 1 : 0,
      openedAt,
      deadlineAt,
    );
  }

  get(id: string): StreamRecord | null {
    const row = this.sql.exec<StreamRow>(`SELECT * FROM call_streams WHERE id = ?`, id).toArray()[0];
    if (!row) return null;
    const requestId = jsonId(row.request_id);
    if (requestId === undefined) return null;
    const progressToken = row.progress_token === null ? undefined : jsonId(row.progress_token);
    const ref: ResumableStreamRef = {
      id: row.id,
      requestId,
      structuredExpected: row.structured_expected === 1,
      // Only read when a stream opens; a restored one keeps its deadline (the wait it still allows).
      timeoutMs: Math.max(row.deadline_at - row.opened_at, 0),
      ...(progressToken === undefined ? {} : { progressToken }),
    };
    return { ref, runId: row.run_id, openedAt: row.opened_at, deadlineAt: row.deadline_at };
  }

  /** Drops the streams whose run ended long enough ago that no client resumes them any more. */
  purge(before: number): number {
    return this.sql.exec(`DELETE FROM call_streams WHERE deadline_at < ?`, before).rowsWritten;
  }
}

const MAX_ID_CHARS = 1_000;

/** A JSON-RPC id (or progress token) as stored: a string or a number, nothing else. */
function jsonId(json: string): string | number | undefined {
  const value: unknown = JSON.parse(json);
  return typeof value === "string" || typeof value === "number" ? value : undefined;
}
