/**
 * Whether a POSTed JSON-RPC body may hold a `tools/list` request (alone or in a batch). A
 * substring test: a false positive (the string inside some argument) only costs the cached
 * tool-list reads that annotations need, and a body without it never pays them.
 */
export function mayListTools(body: Uint8Array): boolean {
  return new TextDecoder().decode(body).includes('"tools/list"');
}
