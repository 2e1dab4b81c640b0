import { ProtocolError } from "@modelcontextprotocol/client";
import type { JSONRPCMessage, MessageExtraInfo, RequestId, Transport, TransportSendOptions } from "@modelcontextprotocol/client";
import { isMalformedMessage } from "./transport-failure";

/** Marks the error response made up here for a request whose stream ended unanswered. */
const STREAM_ENDED = "slipsnisse/request-stream-ended";
/** The same, when a malformed message arrived while that request's stream was open. */
const MALFORMED_ANSWER = "slipsnisse/malformed-answer";
const MAX_DETAIL_CHARS = 200;

/**
 * Wraps a Streamable HTTP client transport so that cancelling a request also closes that
 * request's own HTTP stream. On a 2025 connection the SDK cancels only by POSTing
 * `notifications/cancelled`; a stateless 2025 server (a fresh server per request, the common
 * deployment) receives that on a new instance that knows nothing of the call, and the call runs
 * to the end. Closing the POST's response stream is what such a server does notice (the SDK v1
 * server aborts the handler when its response closes). The notification is still sent, for
 * stateful servers that map it. 2026-07-28 connections already cancel by closing the stream.
 *
 * It also fails a request whose response stream ended before the answer (the server died or
 * restarted mid-call). The SDK's Client wires `onRequestStreamEnd` only for subscriptions, so
 * such a request would otherwise wait for its call timeout; an error response for its id settles
 * it now, and `isStreamEndedError` lets the caller treat it as the server being gone. If a
 * message that did not parse (or that the JSON-RPC schema refused) arrived while the request's
 * stream was open, the SDK only reported it to `onerror` and went on; the request then ends as
 * a malformed answer instead (`isMalformedAnswerError`): the server answered, wrongly, and only
 * that call fails.
 */
export class CancelClosesStreamTransport implements Transport {
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  onmessage?: (<T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void) | undefined;

  private readonly streams = new Map<RequestId, AbortController>();
  /** Requests whose stream carried a malformed message, with what was wrong. */
  private readonly malformed = new Map<RequestId, string>();

  constructor(private readonly inner: Transport) {
    inner.onclose = () => this.onclose?.();
    inner.onerror = (error) => {
      // The SDK does not say which stream it came from: every open request is marked (only one that then ends unanswered uses it).
      if (isMalformedMessage(error)) for (const id of this.streams.keys()) this.malformed.set(id, error.message.slice(0, MAX_DETAIL_CHARS));
      this.onerror?.(error);
    };
    inner.onmessage = <T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => {
      // Messages the SDK's transport parsed already: their shape tells a response (no schema parse per message).
      if (!("method" in message) && "id" in message && message.id !== undefined) {
        this.streams.delete(message.id);
        this.malformed.delete(message.id);
      }
      this.onmessage?.(message, extra);
    };
  }

  get sessionId(): string | undefined {
    return this.inner.sessionId;
  }

  get hasPerRequestStream(): boolean | undefined {
    return this.inner.hasPerRequestStream;
  }

  start(): Promise<void> {
    return this.inner.start();
  }

  async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    // The SDK's own outgoing message: a request is one with a method and an id.
    if ("method" in message && "id" in message) {
      const stream = new AbortController();
      this.streams.set(message.id, stream);
      const requestSignal = options?.requestSignal ? AbortSignal.any([options.requestSignal, stream.signal]) : stream.signal;
      const { id } = message;
      const onRequestStreamEnd = () => {
        options?.onRequestStreamEnd?.();
        this.failUnanswered(id);
      };
      try {
        return await this.inner.send(message, { ...options, requestSignal, onRequestStreamEnd });
      } catch (error) {
        // The request failed as it was sent (its caller gets this error): nothing is left to settle.
        this.streams.delete(id);
        this.malformed.delete(id);
        throw error;
      }
    }
    const cancelledId = cancelledRequestId(message);
    try {
      await this.inner.send(message, options);
    } finally {
      if (cancelledId !== undefined) {
        this.streams.get(cancelledId)?.abort();
        this.streams.delete(cancelledId);
      }
    }
  }

  /** Answered and cancelled requests have left `streams` already; only an unanswered one is failed. */
  private failUnanswered(id: RequestId): void {
    const malformed = this.malformed.get(id);
    this.malformed.delete(id);
    if (!this.streams.delete(id)) return;
    if (malformed !== undefined) {
      const data = { reason: MALFORMED_ANSWER };
      this.onmessage?.({ jsonrpc: "2.0", id, error: { code: -32000, message: `its answer was not a valid JSON-RPC message (${malformed})`, data } });
      return;
    }
    const data = { reason: STREAM_ENDED };
    this.onmessage?.({ jsonrpc: "2.0", id, error: { code: -32000, message: "the server closed the response stream before answering", data } });
  }

  close(): Promise<void> {
    this.streams.clear();
    this.malformed.clear();
    return this.inner.close();
  }

  setProtocolVersion(version: string): void {
    this.inner.setProtocolVersion?.(version);
  }

  setSupportedProtocolVersions(versions: string[]): void {
    this.inner.setSupportedProtocolVersions?.(versions);
  }
}

function cancelledRequestId(message: JSONRPCMessage): RequestId | undefined {
  if (!("method" in message) || message.method !== "notifications/cancelled" || "id" in message) return undefined;
  const id: unknown = message.params?.requestId;
  return typeof id === "string" || typeof id === "number" ? id : undefined;
}

function madeUpReason(error: unknown): unknown {
  if (!(error instanceof ProtocolError) || typeof error.data !== "object" || error.data === null) return undefined;
  return Reflect.get(error.data, "reason");
}

/** Whether a request failed because its response stream ended before an answer (see above). */
export function isStreamEndedError(error: unknown): boolean {
  return madeUpReason(error) === STREAM_ENDED;
}

/** Whether a request's stream ended unanswered after carrying a malformed message (see above). */
export function isMalformedAnswerError(error: unknown): boolean {
  return madeUpReason(error) === MALFORMED_ANSWER;
}
