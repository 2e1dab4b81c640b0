import { classifyInboundRequest, type JSONRPCRequest } from "@modelcontextprotocol/server";

/**
 * A POSTed JSON-RPC body as the checks before the MCP SDK see it: decoded and parsed at most once
 * however many of them look (depth, cancels, mid-call replies, `initialize`, resumable calls,
 * both task forms, tools/list). Both steps are lazy, since most checks decide on a substring and
 * most bodies never need the JSON here (the SDK parses the body again: it takes a Request).
 */
export class PostedBody {
  private decoded: string | undefined;
  private parsed: { value: unknown } | undefined;

  constructor(readonly bytes: Uint8Array<ArrayBuffer>) {}

  get text(): string {
    this.decoded ??= new TextDecoder().decode(this.bytes);
    return this.decoded;
  }

  includes(needle: string): boolean {
    return this.text.includes(needle);
  }

  /**
   * The parsed JSON, or undefined when the body is not JSON. Runs after the depth check
   * (early-refusals.ts); V8's JSON.parse does not recurse, so even a deep body cannot overflow it.
   */
  json(): unknown {
    if (this.parsed === undefined) {
      try {
        this.parsed = { value: JSON.parse(this.text) };
      } catch {
        this.parsed = { value: undefined };
      }
    }
    return this.parsed.value;
  }
}

/**
 * The 2026-07-28 request a POST carries, as the SDK's own ladder reads it (era, envelope, the
 * Mcp-Method and Mcp-Name headers against the body), for the methods served before the SDK
 * (Tasks extension, subscriptions/listen); null for anything else, which the SDK then answers.
 */
export function modernRequest(request: Request, body: PostedBody, version: string): JSONRPCRequest | null {
  const json = body.json();
  if (json === undefined) return null;
  const route = classifyInboundRequest({
    httpMethod: request.method,
    protocolVersionHeader: version,
    mcpMethodHeader: request.headers.get("mcp-method") ?? undefined,
    mcpNameHeader: request.headers.get("mcp-name") ?? undefined,
    body: json,
  });
  return route.kind === "modern" && route.messageKind === "request" ? route.message : null;
}

/** The answer to such a request, served before the SDK: its `result` or `error` under the request's id. */
export function replyTo(
  message: JSONRPCRequest,
  payload: { result: unknown } | { error: { code: number; message: string; data?: unknown } },
  status = 200,
): Response {
  return Response.json({ jsonrpc: "2.0", id: message.id, ...payload }, { status });
}
