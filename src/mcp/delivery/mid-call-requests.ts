import type { ClientReply } from "../../experts/protocol/client-replies";
import { MID_CALL_REQUEST_ID_PREFIX } from "../inbound/inbound-post";

/*
 * Server-to-client requests in the middle of a stateless 2025 Streamable HTTP call
 * (docs/platform-notes.md#elicitation). createMcpHandler serves every POST on a fresh server, so
 * the SDK can neither know the client's capabilities (it saw no `initialize`) nor receive the
 * client's reply (a new POST reaching another server). Both are carried outside the SDK:
 * - capabilities: the clientSessionId minted at `initialize` says what the client declared
 *   (inbound/client-session-id.ts), and the ClientProfile reads it back;
 * - the request: written onto the call's own SSE response stream, beside the SDK's events;
 * - the reply: a POSTed JSON-RPC response whose id this server minted (inbound-post.ts finds it),
 *   delivered to the caller's own ExpertSession, where the waiting run takes it
 *   (ExpertSession.deliverClientReply).
 * Nothing here is specific to form elicitation: URL-mode elicitation goes through `request` too.
 */

/** How the SDK opens each message event it writes; a resumable stream's ids go right after it. */
const MESSAGE_EVENT = new TextEncoder().encode("event: message\n");

/**
 * The SSE response stream of one call, with room for this server's own requests between the SDK's
 * events (the SDK enqueues each event, and each keep-alive, as one whole chunk). Messages sent
 * before the response exists wait for it. A resumable stream (resumable-calls.ts) opens with a
 * priming event carrying an id and `retry`, and numbers the SDK's events `<id>:<n>` (n from 1),
 * the numbering the session keeps for a resumption; requests sent here carry no id.
 */
export class CallStream {
  private controller: ReadableStreamDefaultController<Uint8Array> | undefined;
  private readonly pending: string[] = [];
  private readonly encoder = new TextEncoder();
  private events = 0;
  /** The response stream closed or was cancelled: nothing sent here reaches the client any more. */
  private ended = false;

  constructor(readonly resumable?: { id: string; retryMs: number }) {}

  /**
   * The handler's response with this stream's messages joined in; a non-SSE response is returned
   * as it is. A stream pulled from the handler's reader rather than a TransformStream piped to:
   * one stream and one read per event, where a pipe was two streams and a loop between them.
   */
  attach(response: Response): Response {
    if (!response.body || !response.headers.get("content-type")?.includes("text/event-stream")) return response;
    const reader = response.body.getReader();
    const body = new ReadableStream<Uint8Array>({
      start: (controller) => {
        this.controller = controller;
        const resumable = this.resumable;
        if (resumable) controller.enqueue(this.encoder.encode(`id: ${resumable.id}:0\nretry: ${resumable.retryMs}\ndata: \n\n`));
        for (const frame of this.pending.splice(0)) controller.enqueue(this.encoder.encode(frame));
      },
      pull: async (controller) => {
        const { done, value } = await reader.read();
        if (!done) return controller.enqueue(this.stamped(value));
        this.end();
        controller.close();
      },
      cancel: (reason) => {
        this.end();
        return reader.cancel(reason);
      },
    });
    return new Response(body, response);
  }

  private end(): void {
    this.ended = true;
    this.controller = undefined;
  }

  /** An SDK event with the next id of a resumable stream (one it already numbered, a keep-alive or any other chunk as it came). */
  private stamped(chunk: Uint8Array): Uint8Array {
    const resumable = this.resumable;
    if (!resumable || !startsWith(chunk, MESSAGE_EVENT) || hasIdLine(chunk)) return chunk;
    this.events += 1;
    const id = this.encoder.encode(`id: ${resumable.id}:${this.events}\n`);
    const out = new Uint8Array(chunk.byteLength + id.byteLength);
    out.set(MESSAGE_EVENT);
    out.set(id, MESSAGE_EVENT.byteLength);
    out.set(chunk.subarray(MESSAGE_EVENT.byteLength), MESSAGE_EVENT.byteLength + id.byteLength);
    return out;
  }

  /** Sends a JSON-RPC request to the client on this call's stream; returns its id. */
  send(method: string, params: Record<string, unknown>): string {
    const id = `${MID_CALL_REQUEST_ID_PREFIX}${crypto.randomUUID()}`;
    this.write({ jsonrpc: "2.0", id, method, params });
    return id;
  }

  /**
   * Sends a notification on this call's stream. The SDK's own notify checks the capabilities the
   * client declared at `initialize`, which a stateless request's server never saw, and sends
   * nothing (notifications/elicitation/complete was lost that way).
   */
  notify(method: string, params: Record<string, unknown>): void {
    this.write({ jsonrpc: "2.0", method, params });
  }

  private write(message: Record<string, unknown>): void {
    if (this.ended) return;
    const frame = `event: message\ndata: ${JSON.stringify(message)}\n\n`;
    if (this.controller) this.controller.enqueue(this.encoder.encode(frame));
    else this.pending.push(frame);
  }
}

function startsWith(bytes: Uint8Array, prefix: Uint8Array): boolean {
  if (bytes.byteLength < prefix.byteLength) return false;
  for (let i = 0; i < prefix.byteLength; i += 1) if (bytes[i] !== prefix[i]) return false;
  return true;
}

/** Whether the event's own lines (before its data) carry an `id:`: the SDK numbered it itself. */
function hasIdLine(event: Uint8Array): boolean {
  // "id: " right after the "event: message\n" line; the SDK writes the id before the data.
  const at = MESSAGE_EVENT.byteLength;
  return event[at] === 0x69 && event[at + 1] === 0x64 && event[at + 2] === 0x3a;
}

/** Sends requests to the client mid-call and waits for its routed reply. */
export interface ClientRequester {
  request(method: string, params: Record<string, unknown>, timeoutMs: number): Promise<ClientReply>;
  notify(method: string, params: Record<string, unknown>): void;
}

export function routedRequester(stream: CallStream, session: { awaitClientReply(id: string, timeoutMs: number): Promise<ClientReply> }): ClientRequester {
  return {
    async request(method, params, timeoutMs) {
      return session.awaitClientReply(stream.send(method, params), timeoutMs);
    },
    notify(method, params) {
      stream.notify(method, params);
    },
  };
}
