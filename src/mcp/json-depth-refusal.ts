import { MAX_JSON_DEPTH, jsonDepthOverLimit } from "../untrusted/json-depth";
import { McpMessageTooDeepError } from "./mcp-errors";

/**
 * The answer to a POSTed JSON-RPC body nested deeper than MAX_JSON_DEPTH, or null when it is
 * not. Checked on the raw bytes, iteratively, before anything parses it for the SDK. The reply
 * names the request's id when one can be read (V8's JSON.parse does not recurse, so the parse
 * for the id is safe), so the client's pending call fails at once with the reason instead of
 * timing out; without an id it is a 400 with `id: null`, as JSON-RPC 2.0 §5 says. Legacy SSE
 * answers on its stream, so there the POST's own refusal is always a 400 (`statusWithId`).
 */
export function deepMessageRefusal(bytes: Uint8Array, statusWithId: 200 | 400 = 200): Response | null {
  const depth = jsonDepthOverLimit(bytes);
  if (depth === null) return null;
  const message = parseQuietly(bytes);
  const id = typeof message?.id === "string" || typeof message?.id === "number" ? message.id : null;
  const code = typeof message?.method === "string" && id !== null ? -32602 : -32600;
  const error = new McpMessageTooDeepError(depth, MAX_JSON_DEPTH, code);
  return Response.json({ jsonrpc: "2.0", id, error: { code, message: error.message } }, { status: id === null ? 400 : statusWithId });
}

function parseQuietly(bytes: Uint8Array): { id?: unknown; method?: unknown } | null {
  try {
    const value: unknown = JSON.parse(new TextDecoder().decode(bytes));
    return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as { id?: unknown; method?: unknown }) : null;
  } catch {
    return null;
  }
}
