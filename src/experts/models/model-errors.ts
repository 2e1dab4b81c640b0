import { SlipsnisseError } from "../../errors";
import type { ProviderName } from "../../catalog/catalog-schema";

/**
 * Model errors: resolving a provider (missing key, missing base_url) and calling it (unreachable,
 * rejected key, unknown model, rate limit, provider outage). Messages name the expert and the
 * provider/model; they never carry a key or a raw request.
 */
export interface ModelRef {
  expert: string;
  provider: ProviderName;
  model: string;
}

function label(ref: ModelRef): string {
  return `${ref.provider} model "${ref.model}"`;
}

export class MissingModelApiKeyError extends SlipsnisseError {
  readonly kind = "model-api-key-missing";
  readonly fix: string;
  constructor(
    readonly ref: ModelRef,
    readonly secretName: string,
  ) {
    super(`Expert "${ref.expert}" uses ${label(ref)}, but the secret ${secretName} is not set.`);
    this.fix = `Run \`wrangler secret put ${secretName}\` (or put ${secretName}=... in .dev.vars for npm start).`;
  }
}

export class MissingBaseUrlError extends SlipsnisseError {
  readonly kind = "model-base-url-missing";
  readonly fix = 'Set "base_url" on the expert, e.g. "http://127.0.0.1:11434/v1" for Ollama.';
  constructor(readonly ref: ModelRef) {
    super(`Expert "${ref.expert}" uses provider openai-compatible but has no base_url.`);
  }
}

/** An openai-compatible base_url the Worker refuses to call (the same rules as downstream server URLs). */
export class UnsafeModelEndpointError extends SlipsnisseError {
  readonly kind = "unsafe-model-endpoint";
  readonly fix =
    "Set the expert's base_url to the model endpoint's public https:// URL without user:password (the key goes in the secret named by api_key_secret). Loopback endpoints work only in local development (ENVIRONMENT=local).";
  constructor(
    readonly ref: ModelRef,
    /** Origin only: a URL with credentials in it must not be echoed whole. */
    readonly origin: string,
    readonly reason: string,
  ) {
    super(`Expert "${ref.expert}" has an unsafe model endpoint (${label(ref)} at ${origin}): ${reason}. Nothing was sent to it.`);
  }
}

export class ModelEndpointUnreachableError extends SlipsnisseError {
  readonly kind = "model-unreachable";
  readonly fix: string;
  constructor(
    readonly ref: ModelRef,
    readonly endpoint: string,
  ) {
    super(`Expert "${ref.expert}" could not reach ${endpoint} (${label(ref)}).`);
    this.fix = `Is the server running? Check the expert's base_url and that ${endpoint} is reachable from the Worker.`;
  }
}

export class WorkersAiNeedsRemoteError extends SlipsnisseError {
  readonly kind = "workers-ai-needs-remote";
  readonly fix =
    "Run `npx wrangler login`, then `npm run start:remote` (the AI binding runs remotely, the rest stays local), or configure the expert with provider google or openai-compatible.";
  constructor(readonly ref: ModelRef) {
    super(`Expert "${ref.expert}" uses ${label(ref)}, but the Workers AI binding only runs remotely and this is a local session.`);
  }
}

export class ModelAuthRejectedError extends SlipsnisseError {
  readonly kind = "model-auth-rejected";
  readonly fix: string;
  constructor(
    readonly ref: ModelRef,
    readonly status: number,
    secretName: string | undefined,
  ) {
    super(`The ${ref.provider} API refused the credentials of expert "${ref.expert}" (HTTP ${status}).`);
    this.fix = secretName
      ? `Check the key in the secret ${secretName} (\`wrangler secret put ${secretName}\`) and that it may use model "${ref.model}".`
      : `Check the endpoint's credentials: set api_key_secret on the expert and the secret it names.`;
  }
}

export class ModelNotFoundError extends SlipsnisseError {
  readonly kind = "model-not-found";
  readonly fix: string;
  constructor(readonly ref: ModelRef) {
    super(`The ${ref.provider} API does not know model "${ref.model}" (expert "${ref.expert}").`);
    this.fix = `Fix the expert's "model" field; for openai-compatible also check base_url ends where the API lives (often /v1).`;
  }
}

export class ModelRateLimitedError extends SlipsnisseError {
  readonly kind = "model-rate-limited";
  readonly fix = "Retry in a little while, raise the provider quota, or give the expert a different model.";
  constructor(
    readonly ref: ModelRef,
    /** Why retrying stopped, when the provider asked for a wait the budget did not have. */
    readonly waitNote?: string,
  ) {
    super(
      `The ${ref.provider} API rate-limited expert "${ref.expert}" (HTTP 429) and retries within its time budget did not succeed${waitNote ? ` (${waitNote})` : ""}.`,
    );
  }
}

export class ModelProviderFailedError extends SlipsnisseError {
  readonly kind = "model-provider-failed";
  readonly fix = "Retry later; if it persists, check the provider's status or give the expert a different model.";
  constructor(
    readonly ref: ModelRef,
    readonly status: number | undefined,
    readonly detail: string,
  ) {
    super(`The call to ${label(ref)} for expert "${ref.expert}" failed${status === undefined ? "" : ` (HTTP ${status})`}: ${detail}`);
  }
}

/** A model's response went past the per-response byte cap (model-registry.ts); the rest was not read. */
export class ModelResponseTooLargeError extends SlipsnisseError {
  readonly kind = "model-response-too-large";
  readonly fix: string;
  constructor(
    readonly ref: ModelRef,
    readonly maxBytes: number,
  ) {
    super(`The response of ${label(ref)} for expert "${ref.expert}" was larger than the ${maxBytes}-byte cap on model responses; the rest was not read.`);
    this.fix = `Lower the expert's budget.max_output_tokens, or check that the endpoint at base_url is the model API it should be.`;
  }
}
