import { AsyncLocalStorage } from "node:async_hooks";

/**
 * The W3C Trace Context of the run an outbound request belongs to. Downstream MCP clients are
 * shared by every run of a session and the MCP client API takes no per-request headers, so the
 * run's trace id travels in async context and the transport's fetch reads it per request.
 */
export interface RunTrace {
  /** 32 lowercase hex digits, never all zeros (W3C Trace Context, trace-id). */
  traceId: string;
}

const current = new AsyncLocalStorage<RunTrace>();

/** Runs `work` with `trace` as the trace of every downstream and model request it makes. */
export function withRunTrace<T>(trace: RunTrace, work: () => T): T {
  return current.run(trace, work);
}

export function currentRunTrace(): RunTrace | undefined {
  return current.getStore();
}

/** A run id (a UUID) as a trace id: 122 random bits already, and one lookup key less. */
export function traceIdOf(runId: string): string {
  const hex = runId.replaceAll("-", "").toLowerCase();
  return /^[0-9a-f]{32}$/.test(hex) && !/^0+$/.test(hex) ? hex : randomHex(16);
}

/** A `traceparent` header value: version 00, a fresh span id per request, sampled. */
export function traceparent(trace: RunTrace): string {
  return `00-${trace.traceId}-${randomHex(8)}-01`;
}

type UrlFetch = (url: string | URL, init?: RequestInit) => Promise<Response>;

/** Adds the current run's `traceparent` to every request the wrapped fetch sends. */
export function fetchWithTraceparent(fetch: UrlFetch): UrlFetch {
  return (url, init) => {
    const trace = currentRunTrace();
    if (trace === undefined) return fetch(url, init);
    const headers = new Headers(init?.headers);
    headers.set("traceparent", traceparent(trace));
    return fetch(url, { ...init, headers });
  };
}

const HEX = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, "0"));
/**
 * Random bytes for span ids, drawn from the CSPRNG a page at a time: a span id per outbound
 * request is no secret (it is sent with the request), and one call into the runtime per request
 * cost more than the rest of the header. Each byte is used once.
 */
const pool = new Uint8Array(1024);
let poolAt = pool.byteLength;

function randomHex(bytes: number): string {
  if (poolAt + bytes > pool.byteLength) {
    crypto.getRandomValues(pool);
    poolAt = 0;
  }
  let hex = "";
  let zero = true;
  for (let i = poolAt; i < poolAt + bytes; i += 1) {
    const byte = pool[i] ?? 0;
    if (byte !== 0) zero = false;
    hex += HEX[byte];
  }
  poolAt += bytes;
  // W3C Trace Context: an all-zero id is invalid.
  return zero ? `${hex.slice(0, -1)}1` : hex;
}
