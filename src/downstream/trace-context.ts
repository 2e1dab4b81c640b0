import { AsyncLocalStorage } from "node:async_hooks";

/**
 * The W3C Trace Context of the run an outbound request belongs to. Downstream MCP clients are
 * shared by every run of a session and the MCP client API takes no per-request headers, so the
 * run's trace id travels in async context and the transport's fetch reads it per request.
 */
export interface RunTrace {
  /** 32 lowercase hex digits, never all zeros (W3C Trace Context, trace-id). */
  traceId: string;
  /**
   * The run's own span (16 hex digits): every outbound request names it as its parent, so a
   * downstream server's spans join the run's. Absent: a fresh id per request.
   */
  spanId?: string;
  /** The caller's `tracestate`, passed on unchanged (W3C Trace Context: vendors' entries travel with the trace). */
  traceState?: string;
  /** The caller's sampled flag; absent counts as sampled. */
  sampled?: boolean;
}

/** A caller's trace context as accepted from `params._meta` (SEP-414): the span a run joins under. */
export interface CallerTrace {
  traceId: string;
  /** The caller's span: the run's spans are its children. */
  spanId: string;
  sampled: boolean;
  traceState?: string;
}

// W3C Trace Context §3.2: version 00 is exactly 55 characters; a later version may append fields
// after a dash, which a version-00 reader ignores. 512 bounds what is read of either header.
const MAX_HEADER = 512;
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-[\x21-\x7e]*)?$/;
// §3.3.1: list-members `key=value`, at most 32; keys lowercase (with an optional tenant@system),
// values printable ASCII without `,` and `=`, not ending in a space.
const TRACESTATE_MEMBER = /^[a-z0-9][a-z0-9_\-*/@]{0,255}=[\x20-\x2b\x2d-\x3c\x3e-\x7e]{0,255}[\x21-\x2b\x2d-\x3c\x3e-\x7e]$/;

/**
 * The caller's `traceparent` (and `tracestate`) if they are valid W3C Trace Context; anything
 * else (not a string, oversized, bad hex, version ff, all-zero ids) is ignored and the run starts
 * its own trace. An invalid `tracestate` alone is dropped, as §3.3 says, keeping the parent.
 */
export function parseCallerTrace(traceparent: unknown, tracestate?: unknown): CallerTrace | undefined {
  if (typeof traceparent !== "string" || traceparent.length > MAX_HEADER) return undefined;
  const match = TRACEPARENT.exec(traceparent);
  if (!match) return undefined;
  const [, version, traceId, spanId, flags, rest] = match;
  if (version === undefined || traceId === undefined || spanId === undefined || flags === undefined) return undefined;
  if (version === "ff" || (version === "00" && rest !== undefined)) return undefined;
  if (/^0+$/.test(traceId) || /^0+$/.test(spanId)) return undefined;
  const state = validTraceState(tracestate);
  return { traceId, spanId, sampled: (Number.parseInt(flags, 16) & 1) === 1, ...(state === undefined ? {} : { traceState: state }) };
}

/** The caller's trace context from an MCP request's `params._meta` (SEP-414), whatever `_meta` holds. */
export function callerTraceOfMeta(meta: unknown): CallerTrace | undefined {
  if (typeof meta !== "object" || meta === null) return undefined;
  return parseCallerTrace(Reflect.get(meta, "traceparent"), Reflect.get(meta, "tracestate"));
}

function validTraceState(value: unknown): string | undefined {
  if (typeof value !== "string" || value.length === 0 || value.length > MAX_HEADER) return undefined;
  const members = value.split(",").map((member) => member.replace(/^[ \t]+|[ \t]+$/g, ""));
  if (members.length > 32 || !members.every((member) => TRACESTATE_MEMBER.test(member))) return undefined;
  return members.join(",");
}

/** A fresh span id: 16 hex digits, never all zeros. */
export function newSpanId(): string {
  return randomHex(8);
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

/** A `traceparent` header value: version 00, the run's span (or a fresh one) as parent, its sampled flag. */
export function traceparent(trace: RunTrace): string {
  return `00-${trace.traceId}-${trace.spanId ?? randomHex(8)}-${trace.sampled === false ? "00" : "01"}`;
}

/** The trace context as an MCP request's `params._meta` carries it (SEP-414). */
export function traceMeta(trace: RunTrace): { traceparent: string; tracestate?: string } {
  return { traceparent: traceparent(trace), ...(trace.traceState === undefined ? {} : { tracestate: trace.traceState }) };
}

type UrlFetch = (url: string | URL, init?: RequestInit) => Promise<Response>;

/** Adds the current run's `traceparent` to every request the wrapped fetch sends. */
export function fetchWithTraceparent(fetch: UrlFetch): UrlFetch {
  return (url, init) => {
    const trace = currentRunTrace();
    if (trace === undefined) return fetch(url, init);
    const headers = new Headers(init?.headers);
    headers.set("traceparent", traceparent(trace));
    if (trace.traceState !== undefined) headers.set("tracestate", trace.traceState);
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
