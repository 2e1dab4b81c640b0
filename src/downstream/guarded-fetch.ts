import type { FetchLike } from "@modelcontextprotocol/client";
import { isLocalDevelopment } from "../env";
import { resolveOverHttps, type HostResolver } from "./host-resolver";
import { UnsafeDownstreamUrlError } from "./downstream-errors";
import { assertSafeDownstreamUrl, hostProblem } from "./url-guard";

const MAX_REDIRECTS = 5;
const REDIRECTS = new Set([301, 302, 303, 307, 308]);
/** How long a name that resolved to public addresses is trusted before it is looked up again. */
const RESOLVED_TTL_MS = 60_000;

/**
 * The fetch for URL-addressed downstream servers (SSRF defence, issue "hostile input"): every
 * hop's URL is checked, the host's addresses must all be public, and redirects are followed by
 * hand so each one is checked too. A redirect to another origin is refused rather than
 * followed, because the server's configured headers may carry secrets meant for this origin
 * only.
 */
export function guardedFetch(serverId: string, env: Env, resolve: HostResolver = resolveOverHttps): FetchLike {
  const trusted = new Map<string, number>();
  return async (input, init) => {
    let request = new Request(input, init);
    for (let hop = 0; ; hop++) {
      const url = assertSafeDownstreamUrl(serverId, request.url, env);
      await assertResolvesPublic(serverId, url, env, resolve, trusted);
      const response = await fetch(request.clone(), { redirect: "manual" });
      const location = REDIRECTS.has(response.status) ? response.headers.get("location") : null;
      if (location === null) return response;
      await response.body?.cancel();
      const next = new URL(location, url);
      if (next.origin !== url.origin) {
        throw new UnsafeDownstreamUrlError(serverId, url.origin, `it redirects to another origin (${next.origin}); set the server's url to the final address`);
      }
      if (hop >= MAX_REDIRECTS) throw new UnsafeDownstreamUrlError(serverId, url.origin, `more than ${MAX_REDIRECTS} redirects`);
      request =
        response.status === 303
          ? new Request(next, { method: "GET", headers: request.headers, signal: request.signal })
          : new Request(next, request);
    }
  };
}

async function assertResolvesPublic(
  serverId: string,
  url: URL,
  env: Env,
  resolve: HostResolver,
  trusted: Map<string, number>,
): Promise<void> {
  // Local development may use loopback and has no network for lookups; IP literals were checked already.
  if (isLocalDevelopment(env) || hostProblem(url.hostname) !== null || isIpLiteral(url.hostname)) return;
  if ((trusted.get(url.hostname) ?? 0) > Date.now()) return;
  let addresses: string[];
  try {
    addresses = await resolve(url.hostname);
  } catch (error) {
    throw new UnsafeDownstreamUrlError(serverId, url.origin, `its host could not be resolved to check that it is public (${String(error)})`);
  }
  if (addresses.length === 0) throw new UnsafeDownstreamUrlError(serverId, url.origin, "its host has no addresses");
  for (const address of addresses) {
    const problem = hostProblem(address.includes(":") ? `[${address}]` : address);
    if (problem) throw new UnsafeDownstreamUrlError(serverId, url.origin, `its host resolves to a ${problem.reason} (${address})`);
  }
  trusted.set(url.hostname, Date.now() + RESOLVED_TTL_MS);
}

function isIpLiteral(hostname: string): boolean {
  return hostname.startsWith("[") || /^[0-9.]+$/.test(hostname);
}
