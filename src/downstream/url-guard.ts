import { endpointUrlProblem, hostProblem } from "../catalog/endpoint-url-rules";
import { isLocalDevelopment } from "../env";
import type { SlipsnisseError } from "../errors";
import { UnsafeDownstreamUrlError } from "./downstream-errors";

export { hostProblem };

/** Builds the error for an outbound URL the Worker refuses; `shown` never holds credentials. */
export type RefuseUrl = (shown: string, reason: string) => SlipsnisseError;

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
