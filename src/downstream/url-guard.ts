import { endpointUrlProblem, hostProblem } from "../catalog/endpoint-url-rules";
import { isLocalDevelopment } from "../env";
import { SlipsnisseError } from "../errors";

export { hostProblem };

/** Builds the error for an outbound URL the Worker refuses; `shown` never holds credentials. */
export type RefuseUrl = (shown: string, reason: string) => SlipsnisseError;

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

/**
 * Refuse outbound URLs that would turn the Worker into a proxy into places it must not reach
 * (SSRF): the rules of endpoint-url-rules.ts, where loopback (over http too) passes only in
 * local development. What a hostname resolves to is checked by guarded-fetch.ts, which also
 * re-checks every redirect.
 */
export function assertSafeOutboundUrl(rawUrl: string, env: Env, refuse: RefuseUrl): URL {
  let url: URL;
  try {
    url = new URL(rawUrl);
  } catch {
    throw refuse("(unparseable)", "not a valid URL");
  }
  const problem = endpointUrlProblem(url);
  if (problem !== null && !(problem.kind === "loopback" && isLocalDevelopment(env))) throw refuse(problem.shown, problem.reason);
  return url;
}

/** The downstream server's refusal: names the server. */
export function refuseDownstreamUrl(serverId: string): RefuseUrl {
  return (shown, reason) => new UnsafeDownstreamUrlError(serverId, shown, reason);
}

export function assertSafeDownstreamUrl(serverId: string, rawUrl: string, env: Env): URL {
  return assertSafeOutboundUrl(rawUrl, env, refuseDownstreamUrl(serverId));
}
