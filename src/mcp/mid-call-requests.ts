import type { PostedBody } from "./posted-body";
import type { ClientCapabilities } from "@modelcontextprotocol/server";
import { z } from "zod";
import type { ClientReply } from "../experts/protocol/client-replies";
import { APP_MIME_TYPE, declaresUi, UI_EXTENSION } from "./run-app";

/*
 * Server-to-client requests in the middle of a stateless 2025 Streamable HTTP call
 * (docs/platform-notes.md#elicitation). createMcpHandler serves every POST on a fresh server, so
 * the SDK can neither know the client's capabilities (it saw no `initialize`) nor receive the
 * client's reply (a new POST reaching another server). Both are carried outside the SDK:
 * - capabilities: `initialize` of a client declaring elicitation is answered with an
 *   `Mcp-Session-Id` naming what it declared; the client sends it back on every request;
 * - the request: written onto the call's own SSE response stream, beside the SDK's events;
 * - the reply: a POSTed JSON-RPC response whose id this server minted, delivered to the caller's
 *   own ExpertSession, where the waiting run takes it (ExpertSession.deliverClientReply).
 * Nothing here is specific to form elicitation: URL-mode elicitation goes through `request` too.
 */

/** Ids of requests this server sends mid-call; a reply with another id is the SDK's business. */
const REQUEST_ID_PREFIX = "slipsnisse-req-";
/**
 * The `Mcp-Session-Id` shape minted here: a random id, then what the client declared (f: form,
 * u: url elicitation, a: MCP Apps, run-app.ts).
 */
const CONNECTION_ID = /^[0-9a-f-]{36}\.(f?u?a?)$/;

/** A connection id for an `initialize` whose client declares elicitation or MCP Apps; undefined when it declares neither. */
export function connectionIdFor(capabilities: unknown): string | undefined {
  // Every request that is not an `initialize` (nearly all of them) stops here.
  if (capabilities === undefined) return undefined;
  const elicitation = z.looseObject({ elicitation: z.record(z.string(), z.unknown()) }).safeParse(capabilities);
  const modes = elicitation.success ? elicitation.data.elicitation : undefined;
  // 2025-06-18 declares `elicitation: {}` (form only); 2025-11-25 names the modes.
  const form = modes !== undefined && (Object.keys(modes).length === 0 || "form" in modes);
  const flags = `${form ? "f" : ""}${modes !== undefined && "url" in modes ? "u" : ""}${declaresUi(capabilities) ? "a" : ""}`;
  return flags === "" ? undefined : `${crypto.randomUUID()}.${flags}`;
}

/** What a connection id minted here says the client declared; undefined for any other id (or none). */
export function capabilitiesOfConnection(connection: string | undefined): ClientCapabilities | undefined {
  const flags = connection === undefined ? undefined : CONNECTION_ID.exec(connection)?.[1];
  if (!flags) return undefined;
  const elicitation = flags.includes("f") || flags.includes("u");
  return {
    ...(elicitation ? { elicitation: { ...(flags.includes("f") ? { form: {} } : {}), ...(flags.includes("u") ? { url: {} } : {}) } } : {}),
    ...(flags.includes("a") ? { extensions: { [UI_EXTENSION]: { mimeTypes: [APP_MIME_TYPE] } } } : {}),
  };
}

/** The `initialize` request of a POSTed body, if that is what it is. */
export function initializeCapabilities(body: PostedBody): unknown {
  if (!body.includes('"initialize"')) return undefined;
  const parsed = initializeSchema.safeParse(body.json());
  return parsed.success ? parsed.data.params.capabilities : undefined;
}

const initializeSchema = z.object({ method: z.literal("initialize"), params: z.looseObject({ capabilities: z.unknown() }) });

const responseSchema = z.union([
  z.object({ jsonrpc: z.literal("2.0"), id: z.string(), result: z.record(z.string(), z.unknown()) }),
  z.object({ jsonrpc: z.literal("2.0"), id: z.string(), error: z.looseObject({ code: z.number(), message: z.string() }) }),
]);

/**
 * The replies to this server's mid-call requests in a POSTed body (one message or a batch), and
 * whether they are all the body holds (then the POST is answered 202 here, as the SDK would).
 */
export function clientRepliesIn(body: PostedBody): { replies: Array<{ id: string; reply: ClientReply }>; only: boolean } {
  if (!body.includes(REQUEST_ID_PREFIX)) return { replies: [], only: false };
  const json = body.json();
  if (json === undefined) return { replies: [], only: false };
  const messages = Array.isArray(json) ? json : [json];
  const replies: Array<{ id: string; reply: ClientReply }> = [];
  for (const message of messages) {
    const parsed = responseSchema.safeParse(message);
    if (!parsed.success || !parsed.data.id.startsWith(REQUEST_ID_PREFIX)) continue;
    const data = parsed.data;
    replies.push({ id: data.id, reply: "result" in data ? { result: data.result } : { error: { code: data.error.code, message: data.error.message } } });
  }
  return { replies, only: replies.length === messages.length };
}

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
    const id = `${REQUEST_ID_PREFIX}${crypto.randomUUID()}`;
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
