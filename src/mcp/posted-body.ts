/**
 * The text of a POSTed JSON-RPC body, read from a clone so the MCP handler still reads the
 * original; "" when there is none or it cannot be read. Read once per request and shared by the
 * checks that look at the body before the handler does.
 */
export async function postedBody(request: Request): Promise<string> {
  if (request.method !== "POST" || request.body === null) return "";
  try {
    return await request.clone().text();
  } catch {
    return "";
  }
}

/**
 * Whether the body may hold a `tools/list` request (alone or in a batch). A substring test: a
 * false positive (the string inside some argument) only costs the cached tool-list reads that
 * annotations need, and a body without it never pays them.
 */
export function mayListTools(body: string): boolean {
  return body.includes('"tools/list"');
}
