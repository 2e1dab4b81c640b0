/** The largest MCP request body accepted: the MCP SDK's own default, so both layers agree. */
export const MAX_REQUEST_BODY_BYTES = 4 * 1024 * 1024;
/**
 * How much of an oversized body is read and thrown away before answering 413. A server that
 * answers while the client is still uploading and then stops reading gets its answer lost:
 * behind `wrangler dev` (and other proxies) the client sees a connection reset instead of the
 * 413 (measured in test/e2e/input-bounds.e2e.test.ts). Past this much, the upload is cut.
 */
const MAX_DRAINED_BYTES = 64 * 1024 * 1024;

export type BoundedBody = { ok: true; bytes: Uint8Array<ArrayBuffer> } | { ok: false; response: Response };

/**
 * Reads a request body up to `limit` bytes. A declared Content-Length over it is refused without
 * buffering; a body that grows past it is refused as soon as it does. Either way the rest of the
 * upload is drained (bounded) so the JSON 413 reaches the client.
 */
export async function readBoundedBody(request: Request, limit = MAX_REQUEST_BODY_BYTES): Promise<BoundedBody> {
  if (request.body === null) return { ok: true, bytes: new Uint8Array() };
  const reader = request.body.getReader();
  const declared = Number(request.headers.get("content-length"));
  if (declared > limit) return { ok: false, response: await tooLarge(reader, 0, limit) };
  const chunks: Uint8Array[] = [];
  let received = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    received += value.byteLength;
    if (received > limit) return { ok: false, response: await tooLarge(reader, received, limit) };
    chunks.push(value);
  }
  // The usual body came in one chunk: it is the body, with no copy (as a view of its own buffer).
  const only = chunks.length === 1 ? chunks[0] : undefined;
  if (only !== undefined && only.buffer instanceof ArrayBuffer) return { ok: true, bytes: new Uint8Array(only.buffer, only.byteOffset, only.byteLength) };
  const bytes = new Uint8Array(received);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return { ok: true, bytes };
}

async function tooLarge(reader: ReadableStreamDefaultReader<Uint8Array>, alreadyRead: number, limit: number): Promise<Response> {
  let drained = alreadyRead;
  try {
    while (drained <= MAX_DRAINED_BYTES) {
      const { done, value } = await reader.read();
      if (done) break;
      drained += value.byteLength;
    }
    if (drained > MAX_DRAINED_BYTES) await reader.cancel();
  } catch {
    // The client gave up on its upload; nobody is left to read the answer anyway.
  }
  // The same JSON-RPC error the MCP SDK's transport answers with, so clients see one shape.
  const message = `Payload Too Large: Request body must not exceed ${limit} bytes`;
  return Response.json({ jsonrpc: "2.0", error: { code: -32000, message }, id: null }, { status: 413 });
}
