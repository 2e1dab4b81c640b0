import { SlipsnisseError } from "../errors";

/**
 * Errors of the downstream layer. Messages name the server (and the tool or secret NAME), never
 * a header value: text that came from a downstream server passes through the connection's
 * `redact` first, because a hostile server could echo our credentials back.
 */

/** The server cannot be reached or used right now; its tools leave the experts' view. */
export class DownstreamUnavailableError extends SlipsnisseError {
  readonly kind = "downstream-unavailable";
  readonly fix: string;
  constructor(
    readonly serverId: string,
    readonly reason: string,
    /** A more specific cause (a missing secret, a missing binding) supplies its own fix. */
    override readonly cause?: SlipsnisseError,
  ) {
    super(`Downstream server "${serverId}" is unavailable: ${reason}`);
    this.fix =
      cause?.fix ?? `Check that "${serverId}" is running and reachable at its configured URL, and that its transport and headers in the catalog are right.`;
  }
}

/** A `${NAME}` header reference names a Worker secret that is not set. */
export class MissingSecretError extends SlipsnisseError {
  readonly kind = "missing-secret";
  readonly fix: string;
  constructor(
    readonly serverId: string,
    readonly secretName: string,
  ) {
    super(`Downstream server "${serverId}" needs the Worker secret ${secretName}, which is not set.`);
    this.fix = `Set it with \`wrangler secret put ${secretName}\` (locally: a ${secretName}=... line in .dev.vars).`;
  }
}

/** The server is configured as a service binding the Worker does not have. */
export class MissingServiceBindingError extends SlipsnisseError {
  readonly kind = "missing-service-binding";
  readonly fix: string;
  constructor(
    readonly serverId: string,
    readonly binding: string,
  ) {
    super(`Downstream server "${serverId}" uses the service binding ${binding}, which this Worker does not have.`);
    this.fix = `Add a [[services]] entry with binding = "${binding}" to wrangler.toml (in every [env.<tenant>] block) and deploy again.`;
  }
}

/** The server id is not among the skill's configured servers. */
export class UnknownDownstreamServerError extends SlipsnisseError {
  readonly kind = "unknown-downstream-server";
  readonly fix = "Check the expert's internal_tools: every server id must be one of the skill's servers.";
  constructor(
    readonly skill: string,
    readonly serverId: string,
  ) {
    super(`Skill "${skill}" has no downstream server "${serverId}".`);
  }
}

/** A tool call ran longer than the server's call_timeout_ms. The server stays in the pool. */
export class DownstreamTimeoutError extends SlipsnisseError {
  readonly kind = "downstream-timeout";
  readonly fix: string;
  constructor(
    readonly serverId: string,
    readonly toolName: string,
    readonly timeoutMs: number,
  ) {
    super(`Tool "${toolName}" on downstream server "${serverId}" did not answer within ${timeoutMs} ms.`);
    this.fix = `Ask a narrower question, or raise call_timeout_ms for "${serverId}" in the catalog if the tool is slow by nature.`;
  }
}

/** The caller aborted (budget exhausted, client cancelled) while the call was in flight. */
export class DownstreamCallAbortedError extends SlipsnisseError {
  readonly kind = "downstream-call-aborted";
  readonly fix = "Nothing to fix: the run was cancelled or ran out of time before the tool answered.";
  constructor(
    readonly serverId: string,
    readonly toolName: string,
  ) {
    super(`The call to "${toolName}" on downstream server "${serverId}" was cancelled.`);
  }
}

/**
 * The server is up but the request failed: a JSON-RPC error (unknown tool, invalid arguments)
 * or an answer the client could not accept (a result that breaks the tool's output schema).
 */
export class DownstreamProtocolError extends SlipsnisseError {
  readonly kind = "downstream-protocol";
  readonly fix: string;
  constructor(
    readonly serverId: string,
    /** The tool name, or the MCP method for non-call requests. */
    readonly target: string,
    /** "JSON-RPC -32602", or the SDK's error code such as "INVALID_RESULT". */
    readonly code: string,
    /** Already redacted and truncated by the caller. */
    readonly detail: string,
  ) {
    super(`Downstream server "${serverId}" refused ${target} (${code}): ${detail}`);
    this.fix = `Check the tool name and arguments against "${serverId}"'s tool list.`;
  }
}

/**
 * A response (a JSON body, or one event of an SSE stream) went past the server's
 * max_response_bytes: the rest was not read. Fails that request only; the server stays in the pool.
 */
export class DownstreamResponseTooLargeError extends SlipsnisseError {
  readonly kind = "downstream-response-too-large";
  readonly fix: string;
  constructor(
    readonly serverId: string,
    readonly maxBytes: number,
  ) {
    super(`Downstream server "${serverId}" sent a response larger than its ${maxBytes}-byte cap (max_response_bytes); the rest was not read.`);
    this.fix = `Ask for less (a narrower query, a smaller page), or raise max_response_bytes for "${serverId}" in the catalog if its answers are large by nature.`;
  }
}

/**
 * A request succeeded at the transport level, but what came back is not a valid answer (not
 * JSON-RPC, or a result the MCP schema or the tool's output schema refuses). Fails that request
 * only: the server answered, so it is not put into backoff.
 */
export class DownstreamMalformedResponseError extends SlipsnisseError {
  readonly kind = "downstream-malformed-response";
  readonly fix: string;
  constructor(
    readonly serverId: string,
    /** The tool name, or the MCP method for non-call requests. */
    readonly target: string,
    /** What was wrong; already redacted and truncated by the caller. */
    readonly detail: string,
  ) {
    super(`Downstream server "${serverId}" answered ${target} with a malformed response: ${detail}`);
    this.fix = `This is a bug in "${serverId}" (its answer breaks the MCP protocol); report it to whoever runs that server.`;
  }
}

/** A downstream URL the Worker refuses to call. */
export class UnsafeDownstreamUrlError extends SlipsnisseError {
  readonly kind = "unsafe-downstream-url";
  readonly fix: string;
  constructor(
    readonly serverId: string,
    /** Origin only: a URL with credentials in it must not be echoed whole. */
    readonly origin: string,
    readonly reason: string,
  ) {
    super(`Downstream server "${serverId}" has an unsafe URL (${origin}): ${reason}.`);
    this.fix =
      "Use a public https:// URL without user:password; put credentials in headers with ${SECRET} references. Loopback URLs work only in local development (ENVIRONMENT=local).";
  }
}
