import type { JSONRPCRequest } from "@modelcontextprotocol/server";

/** The answer to a request served before the SDK (Tasks extension, listen): its `result` or `error` under the request's id. */
export function replyTo(
  message: JSONRPCRequest,
  payload: { result: unknown } | { error: { code: number; message: string; data?: unknown } },
  status = 200,
): Response {
  return Response.json({ jsonrpc: "2.0", id: message.id, ...payload }, { status });
}
