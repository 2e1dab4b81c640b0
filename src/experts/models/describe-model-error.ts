import { APICallError, RetryError } from "ai";
import type { ExpertConfig } from "../../catalog/catalog-schema";
import { SlipsnisseError } from "../../errors";
import { apiKeySecretOf, modelRefOf } from "./model-defaults";
import {
  ModelAuthRejectedError,
  ModelEndpointUnreachableError,
  ModelNotFoundError,
  ModelProviderFailedError,
  ModelRateLimitedError,
  ModelResponseTooLargeError,
  WorkersAiNeedsRemoteError,
} from "./model-errors";
import { ModelRetryStoppedError } from "./model-retry";
import { redactCredentialShapes } from "./redact-credentials";

// `wrangler dev --local` and miniflare without remote bindings answer every AI binding call so.
const NEEDS_REMOTE = /needs to be run remotely|remote bindings|AI binding.*not supported/i;
// Connection-level failures as workerd, undici and the AI SDK's fetch wrapper phrase them.
const UNREACHABLE =
  /cannot connect to api|connection refused|econnrefused|fetch failed|failed to fetch|network connection lost|connect(ion)? (error|failed)|enotfound|dns/i;

/** The innermost useful error: the last attempt of a retry, then an APICallError in the cause chain. */
function unwrap(err: unknown): unknown {
  let current = RetryError.isInstance(err) ? err.lastError : err instanceof ModelRetryStoppedError ? err.lastError : err;
  for (let depth = 0; depth < 5; depth++) {
    if (APICallError.isInstance(current) || !(current instanceof Error) || current.cause === undefined) break;
    current = current.cause;
  }
  return current;
}

function messageOf(err: unknown): string {
  if (err instanceof Error) return err.message;
  return typeof err === "string" ? err : "unknown error";
}

/** The host (and port) a model call goes to, for the trace: never the URL's path, query or credentials. */
export function modelEndpointHost(expert: Pick<ExpertConfig, "provider" | "base_url">): string {
  if (expert.provider === "openai-compatible") {
    if (!expert.base_url) return "openai-compatible (no base_url)";
    return URL.canParse(expert.base_url) ? new URL(expert.base_url).host : "openai-compatible (unreadable base_url)";
  }
  if (expert.provider === "google") return "generativelanguage.googleapis.com";
  return "Workers AI binding";
}

function endpointOf(expert: ExpertConfig): string {
  if (expert.provider === "openai-compatible") return expert.base_url ?? "the openai-compatible endpoint";
  if (expert.provider === "google") return "generativelanguage.googleapis.com";
  return "the Workers AI binding";
}

/** Why no (further) retry fitted, when the provider's wait was longer than the time left. */
function retryWaitNote(err: unknown): string | undefined {
  if (!(err instanceof ModelRetryStoppedError) || err.reason !== "deadline" || err.waitMs === undefined) return undefined;
  return `it asked to wait ${Math.round(err.waitMs)} ms, and ${Math.max(0, err.remainingMs)} ms of the budget were left`;
}

/**
 * Maps a model-call failure to one plain-language SlipsnisseError naming the expert, the provider
 * and model, and the fix. Raw provider text is shortened and scrubbed of anything key-like.
 */
export function describeModelError(err: unknown, expert: ExpertConfig): SlipsnisseError {
  if (SlipsnisseError.is(err)) return err;
  // The AI SDK wraps what the fetch threw while reading a body ("Failed to process successful response").
  for (let cause: unknown = err, depth = 0; cause instanceof Error && depth < 5; cause = cause.cause, depth++) {
    if (cause instanceof ModelResponseTooLargeError) return cause;
  }
  const ref = modelRefOf(expert);
  const inner = unwrap(err);
  const outerMessage = messageOf(err);
  const innerMessage = messageOf(inner);

  if (NEEDS_REMOTE.test(outerMessage) || NEEDS_REMOTE.test(innerMessage)) return new WorkersAiNeedsRemoteError(ref);

  const status = APICallError.isInstance(inner) ? inner.statusCode : undefined;
  if (status === 401 || status === 403) return new ModelAuthRejectedError(ref, status, apiKeySecretOf(expert));
  if (status === 404) return new ModelNotFoundError(ref);
  if (status === 429) return new ModelRateLimitedError(ref, retryWaitNote(err));
  if (status === undefined && (UNREACHABLE.test(innerMessage) || UNREACHABLE.test(outerMessage))) {
    return new ModelEndpointUnreachableError(ref, endpointOf(expert));
  }
  const detail = redactCredentialShapes(innerMessage).slice(0, 300);
  return new ModelProviderFailedError(ref, status, detail);
}
