/*
 * The timing of a resumable 2025-11-25 call stream (resumable-calls.ts): how long its client
 * waits before it reconnects, and how long the run waits for it. Plain numbers, no platform
 * imports: the end-to-end tests bound their waits by them.
 */

/**
 * How long a client waits before it reconnects (the priming event's `retry`), for an expert
 * whose budget is `timeoutMs`. The SDK clients (v1 and v2 StreamableHTTPClientTransport) take
 * the server's `retry` as their delay, without backoff, and try `maxRetries` = 2 times before
 * they give up and leave the request pending until their own timeout: so a dropped call is tried
 * again at `retry` and at twice it. A restart (`npm start` restarted: workerd back about 7 s
 * later) is spanned when twice the retry outlasts it; a quarter of the budget keeps both tries
 * within half of it, and the cap keeps a client that left from holding its run much longer
 * (the cancel grace below follows the retry).
 */
export function resumeRetryMs(timeoutMs: number): number {
  return Math.min(Math.max(Math.round(timeoutMs / 4), MIN_RETRY_MS), MAX_RETRY_MS);
}
const MIN_RETRY_MS = 1_000;
const MAX_RETRY_MS = 4_000;
/**
 * How long a dropped call waits for its client to reconnect before the run is cancelled: the
 * client's `retry` and a request's way in, with room to spare (a cancel is still within the
 * seconds test/e2e/faults allows a disconnect). The server notices a drop about half a second
 * after the client (mcp-endpoint.ts KEEP_ALIVE_MS), which the client's wait overlaps.
 */
export function resumeGraceMs(timeoutMs: number): number {
  return resumeRetryMs(timeoutMs) + 1_500;
}
