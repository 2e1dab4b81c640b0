import type { PostedBody } from "./posted-body";

/**
 * Whether a POSTed JSON-RPC body may hold a `tools/list` request (alone or in a batch). A
 * substring test: a false positive (the string inside some argument) only costs the cached
 * tool-list reads that annotations need, and a body without it never pays them.
 */
export function mayListTools(body: PostedBody): boolean {
  return body.includes('"tools/list"');
}
