import { MAX_JSON_DEPTH, jsonDepthOverLimit } from "../../untrusted/json-depth";
import { McpMessageTooDeepError, McpParamsRefusedError } from "../mcp-errors";
import type { PostedBody } from "./posted-body";

/**
 * The longest `uri` a resources/read may name. This server's resources are
 * `slipsnisse://runs/<uuid>` (55 characters); the SDK's template matcher throws past 1 MB,
 * outside any handler, and the client got a 500 (issue 18).
 */
export const MAX_RESOURCE_URI_LENGTH = 8 * 1024;

type JsonRpcId = string | number;

/**
 * Requests refused before the MCP SDK sees them, with a short JSON-RPC error instead of what the
 * SDK would answer (a stack overflow, a 500, a -32603 carrying a zod schema dump). Returns the
 * answer, or null when the request may go on. `statusWithId`: the HTTP status when the reply
 * names a request id (200 on Streamable HTTP, where the reply is the response; 400 on legacy
 * SSE, whose replies travel on the stream, so the POST itself fails and the SDK client fails the
 * call with the text). Without an id it is a 400 with `id: null`, as JSON-RPC 2.0 §5 says.
 */
export function earlyRefusal(body: PostedBody, statusWithId: 200 | 400 = 200): Response | null {
  // Checked on the raw bytes, iteratively, before anything parses the body.
  const depth = jsonDepthOverLimit(body.bytes);
  if (depth !== null) {
    // V8's JSON.parse does not recurse, so parsing for the id is safe; the id makes the client's
    // pending call fail at once with the reason instead of timing out.
    const message = asObject(body.json());
    const id = requestId(message);
    const code = typeof message?.method === "string" && id !== null ? -32602 : -32600;
    return reply(id, code, new McpMessageTooDeepError(depth, MAX_JSON_DEPTH, code).message, statusWithId);
  }
  // Only these two methods need a look; every other body goes on unparsed.
  if (!body.includes('"resources/read"') && !body.includes('"initialize"')) return null;
  const message = asObject(body.json());
  const id = requestId(message);
  if (id === null || message === null) return null;
  const params = typeof message.params === "object" && message.params !== null ? (message.params as Record<string, unknown>) : {};
  if (message.method === "resources/read" && typeof params.uri === "string" && params.uri.length > MAX_RESOURCE_URI_LENGTH) {
    const refusal = new McpParamsRefusedError("resources/read", "uri", `is ${params.uri.length} characters, over the limit of ${MAX_RESOURCE_URI_LENGTH}`);
    return reply(id, -32602, refusal.message, statusWithId);
  }
  if (message.method === "initialize" && "protocolVersion" in params && typeof params.protocolVersion !== "string") {
    const refusal = new McpParamsRefusedError(
      "initialize",
      "protocolVersion",
      `must be a string such as "2025-11-25", not ${jsonType(params.protocolVersion)}`,
    );
    return reply(id, -32602, refusal.message, statusWithId);
  }
  return null;
}

function reply(id: JsonRpcId | null, code: number, message: string, statusWithId: 200 | 400): Response {
  return Response.json({ jsonrpc: "2.0", id, error: { code, message } }, { status: id === null ? 400 : statusWithId });
}

function requestId(message: Record<string, unknown> | null): JsonRpcId | null {
  const id = message?.id;
  return typeof id === "string" || typeof id === "number" ? id : null;
}

function jsonType(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" ? "an object" : `a ${typeof value}`;
}

function asObject(value: unknown): Record<string, unknown> | null {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
}
