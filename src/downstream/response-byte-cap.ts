import type { OutboundFetch } from "./guarded-fetch";

/**
 * Byte caps on response bodies, counted on the stream as the bytes arrive, so a hostile or
 * buggy endpoint cannot make the isolate (128 MB in production) hold an answer of any size: one
 * 60 MB tool result took workerd from 258 MB to 586 MB resident while 2 KB of it reached the
 * model. Nothing past the cap is read: the rest of the body is cancelled (or, inside a shared
 * SSE stream, skipped as it arrives).
 */

const LF = 10;
const CR = 13;
/** How much of an oversized SSE event is kept to find its JSON-RPC id (head and tail). */
const ID_WINDOW_BYTES = 256;
const encoder = new TextEncoder();

/** Hands back a body that fails with `tooLarge()` once more than `maxBytes` have arrived. */
export function capPlainBody(body: ReadableStream<Uint8Array>, maxBytes: number, tooLarge: () => Error): ReadableStream<Uint8Array> {
  let seen = 0;
  return pulledThrough(body, (chunk, sink) => {
    seen += chunk.byteLength;
    // Failing the body cancels the source too: the rest is never read.
    if (seen > maxBytes) sink.error(tooLarge());
    else sink.enqueue(chunk);
  });
}

/** Where a cap puts what it passes on, and how it ends the body early or fails it. */
interface CapSink {
  enqueue(bytes: Uint8Array): void;
  /** Ends the body here; the source is cancelled, so nothing more of it is read. */
  terminate(): void;
  /** Fails the body; the source is cancelled. */
  error(reason: unknown): void;
}

/**
 * `body` through `transform`, as one stream pulled from the source's reader: one read per chunk,
 * where a TransformStream piped to was two streams and a pipe between them (every downstream
 * answer goes through one).
 */
function pulledThrough(body: ReadableStream<Uint8Array>, transform: (chunk: Uint8Array, sink: CapSink) => void): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  let sink: CapSink | undefined;
  /** Chunks passed on, or the body ended, since the pull began. */
  let moved = false;
  return new ReadableStream<Uint8Array>({
    start(controller) {
      sink = {
        enqueue: (bytes) => {
          moved = true;
          controller.enqueue(bytes);
        },
        terminate: () => {
          moved = true;
          controller.close();
          reader.cancel().catch(() => undefined);
        },
        error: (reason) => {
          moved = true;
          controller.error(reason);
          reader.cancel(reason).catch(() => undefined);
        },
      };
    },
    // A pull that passes nothing on (the skipped rest of an oversized event) reads on: the stream
    // does not pull again for a read that is still waiting.
    async pull(controller) {
      moved = false;
      while (!moved && sink) {
        const { done, value } = await reader.read();
        if (done) return controller.close();
        transform(value, sink);
      }
    },
    cancel: (reason) => reader.cancel(reason),
  });
}

/** The body length the response declares, if it declares a sane one. */
export function declaredLength(response: Response): number | undefined {
  const header = response.headers.get("content-length");
  const length = header === null ? Number.NaN : Number(header);
  return Number.isSafeInteger(length) && length >= 0 ? length : undefined;
}

/**
 * Whether HTTP framing already bounds the body within `maxBytes`: a declared Content-Length
 * within the cap on a body that arrives as sent. A delimited body ends where the length says
 * (bytes past it are not this response's; test/e2e/faults/oversized-responses.e2e.test.ts sends
 * some), so counting it again on a stream would cost a TransformStream per response for
 * nothing. Not for a Content-Encoding workerd decodes: a few KB of gzip may declare a small
 * length and inflate to gigabytes.
 */
export function framedWithin(response: Response, maxBytes: number): boolean {
  const length = declaredLength(response);
  if (length === undefined || length > maxBytes) return false;
  const encoding = response.headers.get("content-encoding");
  return encoding === null || encoding.trim().toLowerCase() === "identity";
}

/** The response with another body (and, if given, content type); the declared length goes with the old body. */
export function withBody(response: Response, body: BodyInit | null, contentType?: string): Response {
  const init = { status: response.status, statusText: response.statusText };
  // The Response copies the headers it is given: a copy of our own only when one must change
  // (an SSE answer, every downstream tool call's, declares no length).
  if (contentType === undefined && !response.headers.has("content-length")) return new Response(body, { ...init, headers: response.headers });
  const headers = new Headers(response.headers);
  // The body is re-streamed (or replaced): its length is no longer the declared one.
  headers.delete("content-length");
  if (contentType !== undefined) headers.set("content-type", contentType);
  return new Response(body, { ...init, headers });
}

/**
 * A fetch whose responses fail past `maxBytes` (model providers: one JSON body or stream per
 * call). A declared Content-Length over the cap is refused before a byte is read.
 */
export function capResponseBytes(fetch: OutboundFetch, maxBytes: number, tooLarge: () => Error): OutboundFetch {
  return async (input, init) => {
    const response = await fetch(input, init);
    if (response.body === null) return response;
    if ((declaredLength(response) ?? 0) > maxBytes) {
      await response.body.cancel().catch(() => undefined);
      throw tooLarge();
    }
    if (framedWithin(response, maxBytes)) return response;
    return withBody(response, capPlainBody(response.body, maxBytes, tooLarge));
  };
}

/** What replaces an oversized SSE event: bytes to emit in its place, given what is known of it. */
export type OversizedEvent = (event: { head: Uint8Array; tail: Uint8Array | undefined }) => Uint8Array | undefined;

/**
 * Caps each event of a `text/event-stream` body on its own (a long-lived stream carries many
 * messages; what must stay bounded is the one being assembled). An event past `maxBytes` is cut:
 * the bytes already passed on are closed off as an event type the MCP clients ignore, the rest
 * of the event is skipped as it arrives, and `replace` says what goes in its place. It is asked
 * first with the event's head; if it has nothing yet, again with the tail once the event ends
 * (a JSON-RPC id may be at either end). `endAfterReplacement`, asked at a replacement, says
 * whether to end the stream after it (a per-request stream, whose answer that was). With no
 * replacement at all the body fails with `tooLarge()`.
 */
export function capEventStream(
  body: ReadableStream<Uint8Array>,
  options: { maxBytes: number; replace: OversizedEvent; endAfterReplacement: () => boolean; tooLarge: () => Error },
): ReadableStream<Uint8Array> {
  const { maxBytes } = options;
  let eventBytes = 0;
  let lastWasEol = false;
  let lastWasCr = false;
  let head: Uint8Array[] = [];
  let headBytes = 0;
  /** Skipping the rest of an oversized event; `tail` keeps its last bytes while no replacement is out. */
  let skipping: { replaced: boolean; tail: Uint8Array } | undefined;
  let ended = false;

  const keepHead = (bytes: Uint8Array) => {
    if (headBytes >= ID_WINDOW_BYTES) return;
    const part = bytes.subarray(0, ID_WINDOW_BYTES - headBytes);
    head.push(part.slice());
    headBytes += part.byteLength;
  };
  const keepTail = (tail: Uint8Array, bytes: Uint8Array): Uint8Array => {
    const joined = new Uint8Array(tail.byteLength + bytes.byteLength);
    joined.set(tail);
    joined.set(bytes, tail.byteLength);
    return joined.slice(Math.max(0, joined.byteLength - ID_WINDOW_BYTES));
  };
  const emitReplacement = (sink: CapSink, replacement: Uint8Array): boolean => {
    sink.enqueue(replacement);
    if (!options.endAfterReplacement()) return false;
    ended = true;
    // Ends this stream; the source is cancelled with it, so nothing more is read.
    sink.terminate();
    return true;
  };

  return pulledThrough(body, (chunk, sink) => {
    if (ended) return;
    if (skipping === undefined && !lastWasCr && eventBytes + chunk.byteLength <= maxBytes && chunk.indexOf(CR) === -1) {
      // The usual chunk: LF line ends only (and not the LF of a CRLF split across chunks), and
      // too short to take the event it is in past the cap. Nothing is cut, so only the last
      // event boundary matters, found natively from the end instead of byte by byte (the loop
      // below, for everything else).
      const boundary = lastBoundary(chunk, lastWasEol);
      if (boundary === -1) eventBytes += chunk.byteLength;
      else {
        eventBytes = chunk.byteLength - boundary - 1;
        head = [];
        headBytes = 0;
      }
      keepHead(chunk.subarray(boundary + 1));
      lastWasEol = chunk[chunk.byteLength - 1] === LF || (chunk.byteLength === 0 && lastWasEol);
      lastWasCr = false;
      if (chunk.byteLength > 0) sink.enqueue(chunk);
      return;
    }
    let passFrom = 0;
    let eventStart = 0;
    for (let index = 0; index < chunk.byteLength; index++) {
      const byte = chunk[index] ?? 0;
      const eolBefore = lastWasEol;
      let boundary = false;
      if (byte === LF) {
        if (lastWasCr) lastWasCr = false;
        else if (lastWasEol) boundary = true;
        else lastWasEol = true;
      } else if (byte === CR) {
        if (lastWasEol) boundary = true;
        lastWasEol = true;
        lastWasCr = true;
      } else {
        lastWasEol = false;
        lastWasCr = false;
      }
      if (skipping === undefined) {
        eventBytes += 1;
        if (boundary) {
          eventBytes = 0;
          head = [];
          headBytes = 0;
          eventStart = index + 1;
        } else if (eventBytes > maxBytes) {
          // Pass on what came before the cut; the client's parser then holds a partial event.
          keepHead(chunk.subarray(Math.max(passFrom, eventStart), index));
          sink.enqueue(chunk.slice(passFrom, index));
          // Close that partial event off under a type no MCP client listens to, so it is dropped whole.
          sink.enqueue(encoder.encode(`${eolBefore ? "" : "\n"}event: slipsnisse-cut\n\n`));
          const replacement = options.replace({ head: concat(head), tail: undefined });
          skipping = { replaced: replacement !== undefined, tail: new Uint8Array(0) };
          if (replacement !== undefined && emitReplacement(sink, replacement)) return;
        }
      } else if (boundary) {
        const { replaced, tail } = skipping;
        skipping = undefined;
        eventBytes = 0;
        head = [];
        headBytes = 0;
        passFrom = index + 1;
        eventStart = index + 1;
        if (!replaced) {
          const replacement = options.replace({ head: new Uint8Array(0), tail: keepTail(tail, chunk.subarray(0, index)) });
          if (replacement === undefined) {
            sink.error(options.tooLarge());
            ended = true;
            return;
          }
          if (emitReplacement(sink, replacement)) return;
        }
      }
    }
    if (skipping === undefined) {
      const rest = chunk.subarray(passFrom);
      keepHead(chunk.subarray(Math.max(passFrom, eventStart)));
      if (rest.byteLength > 0) sink.enqueue(passFrom === 0 ? chunk : rest.slice());
    } else if (!skipping.replaced) {
      skipping.tail = keepTail(skipping.tail, chunk.subarray(passFrom));
    }
  });
}

/** Where the last event of an LF-only chunk ends (its blank line's LF), or -1; `eolBefore`: the chunk follows a line end. */
function lastBoundary(chunk: Uint8Array, eolBefore: boolean): number {
  for (let at = chunk.lastIndexOf(LF); at >= 0; at = at === 0 ? -1 : chunk.lastIndexOf(LF, at - 1)) {
    if (at === 0 ? eolBefore : chunk[at - 1] === LF) return at;
  }
  return -1;
}

function concat(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.byteLength, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.byteLength;
  }
  return out;
}

/** Whether the body is an SSE stream (capped per event) rather than one document (capped whole). */
export function isEventStream(response: Response): boolean {
  return (response.headers.get("content-type") ?? "").split(";")[0]?.trim().toLowerCase() === "text/event-stream";
}
