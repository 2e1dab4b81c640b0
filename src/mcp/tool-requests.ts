import type { PostedBody } from "./posted-body";

/**
 * Whether a POSTed JSON-RPC body may hold a `tools/list` request (alone or in a batch). A
 * substring test: a false positive (the string inside some argument) only costs the cached
 * tool-list reads that annotations need, and a body without it never pays them.
 */
export function mayListTools(body: PostedBody): boolean {
  return body.includes('"tools/list"');
}

/**
 * The tool a POST calls when it is one `tools/call` (not a batch): the per-request server then
 * registers only that expert's tool (no run resources, no run view), since nothing else of it is
 * read to answer the call.
 * Undefined for anything else, which gets every tool.
 */
export function calledTool(body: PostedBody): string | undefined {
  if (!body.includes('"tools/call"')) return undefined;
  const message = body.json();
  if (typeof message !== "object" || message === null || Array.isArray(message)) return undefined;
  if (Reflect.get(message, "method") !== "tools/call") return undefined;
  const params: unknown = Reflect.get(message, "params");
  const name = typeof params === "object" && params !== null ? Reflect.get(params, "name") : undefined;
  return typeof name === "string" ? name : undefined;
}
