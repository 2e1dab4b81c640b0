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

/** A short, plain reason for a transport failure; the caller redacts it before use. */
export function describeFailure(error: unknown): string {
  const [outer] = causeChain(error);
  let text: string;
  if (outer instanceof SdkHttpError) text = `HTTP ${outer.status}${outer.statusText ? ` ${outer.statusText}` : ""}: ${outer.message}`;
  else if (outer instanceof SseError) text = `SSE stream failed${outer.code === undefined ? "" : ` (HTTP ${outer.code})`}: ${outer.message}`;
  else if (outer instanceof Error) text = outer.message || outer.name;
  else text = String(outer);
  return text.length > MAX_REASON_CHARS ? `${text.slice(0, MAX_REASON_CHARS)}…` : text;
}
