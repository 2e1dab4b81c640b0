import { SdkError, SdkErrorCode, SdkHttpError, SseError } from "@modelcontextprotocol/client";

const MAX_REASON_CHARS = 300;

/** The errors (with their causes) a failure carries, outermost first; bounded against cycles. */
function causeChain(error: unknown): unknown[] {
  const chain: unknown[] = [];
  let current: unknown = error;
  while (current !== undefined && chain.length < 5) {
    chain.push(current);
    current = current instanceof Error ? current.cause : undefined;
  }
  return chain;
}

/**
 * Whether a Streamable HTTP connect failed because the URL does not speak Streamable HTTP, the
 * spec's backwards-compatibility signal to try the legacy HTTP+SSE transport: an HTTP 4xx
 * (typically 404 or 405) other than 401/403, or an answer that is not MCP at all.
 */
export function isStreamableHttpRejection(error: unknown): boolean {
  return causeChain(error).some((item) => {
    if (item instanceof SdkHttpError) return item.status >= 400 && item.status < 500 && item.status !== 401 && item.status !== 403;
    return item instanceof SdkError && item.code === SdkErrorCode.ClientHttpUnexpectedContent;
  });
}

function describeOne(item: unknown): string {
  if (item instanceof SdkHttpError) return `HTTP ${item.status}${item.statusText ? ` ${item.statusText}` : ""}: ${item.message}`;
  if (item instanceof SseError) return `SSE stream failed${item.code === undefined ? "" : ` (HTTP ${item.code})`}: ${item.message}`;
  if (item instanceof Error) return item.message || item.name;
  return String(item);
}

/**
 * Whether a request failed because the server forgot our session: Streamable HTTP answers a
 * request carrying an unknown Mcp-Session-Id with 404, and the client must initialise again.
 */
export function isExpiredSession(error: unknown, hadSession: boolean): boolean {
  return hadSession && causeChain(error).some((item) => item instanceof SdkHttpError && item.status === 404);
}

/**
 * A short, plain reason for a transport failure: the outer error and, when it wraps one, the
 * root cause (which often holds the server's own words). The caller redacts it before use:
 * those words may echo our credentials.
 */
export function describeFailure(error: unknown): string {
  const chain = causeChain(error);
  const outer = describeOne(chain[0]);
  const root = chain.length > 1 ? describeOne(chain[chain.length - 1]) : "";
  const text = root === "" || outer.includes(root) ? outer : `${outer} (cause: ${root})`;
  return text.length > MAX_REASON_CHARS ? `${text.slice(0, MAX_REASON_CHARS)}…` : text;
}

/** A JSON parse failure or a schema refusal (zod's error, as the SDK's transports throw it) of one message. */
export function isMalformedMessage(error: unknown): boolean {
  if (error instanceof SyntaxError) return true;
  return error instanceof Error && (error.name === "ZodError" || error.name === "$ZodError") && Array.isArray(Reflect.get(error, "issues"));
}
