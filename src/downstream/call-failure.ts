import { ProtocolError, SdkError, SdkErrorCode } from "@modelcontextprotocol/client";
import type { SlipsnisseError } from "../errors";
import {
  DownstreamCallAbortedError,
  DownstreamMalformedResponseError,
  DownstreamProtocolError,
  DownstreamResponseTooLargeError,
  DownstreamTimeoutError,
  DownstreamUnavailableError,
} from "./downstream-errors";
import { responseTooLarge } from "./downstream-response-cap";
import { isMalformedAnswerError, isStreamEndedError } from "./cancel-closes-stream-transport";
import { describeFailure, isMalformedMessage } from "./transport-failure";

const MAX_DETAIL_CHARS = 300;

/** SDK errors raised while the server was reachable: the request failed, the server did not. */
const SERVER_ALIVE_CODES: ReadonlySet<string> = new Set([
  SdkErrorCode.InvalidResult,
  SdkErrorCode.UnsupportedResultType,
  SdkErrorCode.InputRequiredRoundsExceeded,
  SdkErrorCode.ListPaginationExceeded,
  SdkErrorCode.CapabilityNotSupported,
  SdkErrorCode.MethodNotSupportedByProtocolVersion,
]);

export interface CallFailureContext {
  serverId: string;
  target: string;
  timeoutMs: number;
  /** The server's max_response_bytes, for the error that names it. */
  maxResponseBytes: number;
  signal: AbortSignal | undefined;
  redact: (text: string) => string;
}

/**
 * Classify a failed request. Only DownstreamUnavailableError means "the server is gone" (the
 * pool then drops the connection); a timeout, a cancellation or a refusal leaves it warm.
 */
export function classifyCallFailure(error: unknown, context: CallFailureContext): SlipsnisseError {
  const { serverId, target, redact } = context;
  if (context.signal?.aborted) return new DownstreamCallAbortedError(serverId, target);
  if (error instanceof SdkError && error.code === SdkErrorCode.RequestTimeout) {
    return new DownstreamTimeoutError(serverId, target, context.timeoutMs);
  }
  if (responseTooLarge(error)) return new DownstreamResponseTooLargeError(serverId, context.maxResponseBytes);
  if (isStreamEndedError(error)) return new DownstreamUnavailableError(serverId, `it closed the connection while "${target}" was running, before answering`);
  const detail = () => redact(error instanceof Error ? error.message : String(error)).slice(0, MAX_DETAIL_CHARS);
  if (isMalformedAnswerError(error)) return new DownstreamMalformedResponseError(serverId, target, detail());
  if (error instanceof ProtocolError) return new DownstreamProtocolError(serverId, target, `JSON-RPC ${error.code}`, detail());
  // The server answered, but not with JSON-RPC (a body that does not parse, or a message the schema refuses):
  // that answer is wrong, the connection is not, so only this request fails.
  if (isMalformedMessage(error)) return new DownstreamMalformedResponseError(serverId, target, detail());
  if (error instanceof SdkError && SERVER_ALIVE_CODES.has(error.code)) {
    return new DownstreamProtocolError(serverId, target, error.code, detail());
  }
  return new DownstreamUnavailableError(serverId, redact(describeFailure(error)));
}
