import { ProtocolError, type FetchLike } from "@modelcontextprotocol/client";
import { DownstreamResponseTooLargeError } from "./downstream-errors";
import { capEventStream, capPlainBody, declaredLength, framedWithin, isEventStream, withBody } from "./response-byte-cap";

/** Marks the JSON-RPC error made up here in place of an oversized response. */
const TOO_LARGE = "slipsnisse/response-too-large";
const JSON_RPC_ID = String.raw`(-?\d+|"(?:[^"\\]|\\.)*")`;
const ID_AT_START = new RegExp(String.raw`^\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*${JSON_RPC_ID}`);
const ID_AT_END = new RegExp(String.raw`"id"\s*:\s*${JSON_RPC_ID}\s*\}\s*$`);
const encoder = new TextEncoder();
const decoder = new TextDecoder();

type RequestId = string | number;

/**
 * The fetch of one downstream server's MCP transports, with its max_response_bytes counted on
 * every response as it streams: one mechanism for Streamable HTTP (JSON and SSE responses) and
 * legacy SSE. An oversized answer to a request becomes a JSON-RPC error for that request's id
 * (the request fails, the connection stays), which `responseTooLarge` recognises; where no id
 * is known the body fails with DownstreamResponseTooLargeError itself.
 */
export function capDownstreamFetch(serverId: string, maxBytes: number, fetch: FetchLike): FetchLike {
  const tooLarge = () => new DownstreamResponseTooLargeError(serverId, maxBytes);
  const errorFor = (id: RequestId) =>
    JSON.stringify({ jsonrpc: "2.0", id, error: { code: -32000, message: `response over the ${maxBytes}-byte cap`, data: { reason: TOO_LARGE, maxBytes } } });
  return async (url, init) => {
    const response = await fetch(url, init);
    if (response.body === null) return response;
    // The request's id matters only for an oversized answer: parsed then (once), not on every response.
    let parsed: { id: RequestId | undefined } | undefined;
    const requestId = () => {
      parsed ??= { id: requestIdOf(init?.body) };
      return parsed.id;
    };
    if (isEventStream(response)) {
      const body = capEventStream(response.body, {
        maxBytes,
        tooLarge,
        // A POST's stream answers that one request; a GET stream (legacy SSE) carries every answer.
        endAfterReplacement: () => requestId() !== undefined,
        replace: ({ head, tail }) => {
          const id = requestId() ?? idIn(head, tail);
          return id === undefined ? undefined : encoder.encode(`event: message\ndata: ${errorFor(id)}\n\n`);
        },
      });
      return withBody(response, body);
    }
    const id = (declaredLength(response) ?? 0) > maxBytes ? requestId() : undefined;
    if (id !== undefined) {
      await response.body.cancel().catch(() => undefined);
      return withBody(response, errorFor(id), "application/json");
    }
    if (framedWithin(response, maxBytes)) return response;
    return withBody(response, capPlainBody(response.body, maxBytes, tooLarge));
  };
}

/** The id of the JSON-RPC request a transport POSTs (the SDK sends one message as a JSON string). */
function requestIdOf(body: unknown): RequestId | undefined {
  if (typeof body !== "string" || !body.startsWith("{")) return undefined;
  try {
    const message: unknown = JSON.parse(body);
    if (typeof message !== "object" || message === null || !("method" in message)) return undefined;
    const id: unknown = Reflect.get(message, "id");
    return typeof id === "string" || typeof id === "number" ? id : undefined;
  } catch {
    return undefined;
  }
}

/** The id of an oversized SSE event's message: at the start of its data, or at the very end. */
function idIn(head: Uint8Array, tail: Uint8Array | undefined): RequestId | undefined {
  const data = /(?:^|\n)data: ?(.*)/.exec(decoder.decode(head))?.[1] ?? "";
  const found = ID_AT_START.exec(data)?.[1] ?? (tail === undefined ? undefined : ID_AT_END.exec(decoder.decode(tail))?.[1]);
  if (found === undefined) return undefined;
  try {
    const id: unknown = JSON.parse(found);
    return typeof id === "string" || typeof id === "number" ? id : undefined;
  } catch {
    return undefined;
  }
}

/** Whether a failed request is an oversized response cut off by capDownstreamFetch. */
export function responseTooLarge(error: unknown): boolean {
  for (let current = error, depth = 0; current !== undefined && depth < 5; depth++) {
    if (current instanceof DownstreamResponseTooLargeError) return true;
    if (current instanceof ProtocolError && typeof current.data === "object" && current.data !== null && Reflect.get(current.data, "reason") === TOO_LARGE) {
      return true;
    }
    // Some paths stringify the error (the SDK's "SSE stream disconnected: <error>").
    if (current instanceof Error && current.message.includes("(max_response_bytes)")) return true;
    current = current instanceof Error ? current.cause : undefined;
  }
  return false;
}
