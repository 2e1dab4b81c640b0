import type { FetchLike } from "@modelcontextprotocol/client";
import { isLocalDevelopment } from "../env";
import { resolveOverHttps, type HostResolver } from "./host-resolver";
import { assertSafeOutboundUrl, hostProblem, refuseDownstreamUrl, type RefuseUrl } from "./url-guard";

/** A fetch both the MCP transports (FetchLike) and the AI SDK providers (typeof fetch) accept. */
export type OutboundFetch = (input: RequestInfo | URL, init?: RequestInit) => Promise<Response>;

const MAX_REDIRECTS = 5;
const REDIRECTS = new Set([301, 302, 303, 307, 308]);
/** How long a name that resolved to public addresses is trusted before it is looked up again. */
const RESOLVED_TTL_MS = 60_000;

/** The fetch for a URL-addressed downstream server; refusals name the server. */
export function guardedFetch(serverId: string, env: Env, resolve: HostResolver = resolveOverHttps): FetchLike {
  return guardedOutboundFetch(refuseDownstreamUrl(serverId), env, resolve);
}

/**
 * The fetch for every configured outbound endpoint, downstream servers and model base_urls alike
 * (SSRF defence): every hop's URL is checked, the host's addresses must all be public, and
 * redirects are followed by hand so each one is checked too. A redirect to another origin is
 * refused rather than followed, because the configured headers (or a model's API key) may carry
 * secrets meant for this origin only. `refuse` builds the error that names what was called.
 */
export function guardedOutboundFetch(refuse: RefuseUrl, env: Env, resolve: HostResolver = resolveOverHttps): OutboundFetch {
  const guard: Guard = { refuse, env, resolve, trusted: new Map<string, number>() };
  return async (input, init) => {
    // A body given whole (the SDKs send JSON strings) can be sent again after a 307/308 as it
    // is; only a streamed one needs a clone per hop, which tees the stream.
    const body = init?.body ?? null;
    const whole = typeof body === "string" || body instanceof ArrayBuffer || ArrayBuffer.isView(body);
    // The usual call (a URL and a whole body or none, as both SDKs send) goes out as given: a
    // Request built here only to read its URL would be built again by fetch. A redirect builds one.
    if (!(input instanceof Request) && (body === null || whole)) {
      const first = await fetchHop(String(input), () => fetch(input, { ...init, redirect: "manual" }), guard);
      return followRedirects(() => new Request(input, init), first, guard, whole ? body : null, true);
    }
    const request = new Request(input, init);
    const resendable = request.body === null || whole;
    const first = await fetchHop(request.url, sendHop(request, resendable), guard);
    return followRedirects(() => request, first, guard, whole ? body : null, resendable);
  };
}

interface Guard {
  refuse: RefuseUrl;
  env: Env;
  resolve: HostResolver;
  /** Hosts that resolved to public addresses, until when (RESOLVED_TTL_MS). */
  trusted: Map<string, number>;
}

/** One hop: `url` checked (scheme, host, and that its addresses are public), then `send` (redirects by hand). */
async function fetchHop(url: string, send: () => Promise<Response>, guard: Guard): Promise<{ response: Response; url: URL }> {
  const checked = assertSafeOutboundUrl(url, guard.env, guard.refuse);
  await assertResolvesPublic(guard.refuse, checked, guard.env, guard.resolve, guard.trusted);
  return { response: await send(), url: checked };
}

/** Sends `request` as one hop (redirects by hand); a streamed body it must keep for a redirect goes as a clone. */
function sendHop(request: Request, resendable: boolean): () => Promise<Response> {
  return () => fetch(resendable ? request : request.clone(), { redirect: "manual" });
}

/**
 * The first hop's answer, or the end of its redirects followed by hand, each hop checked as the
 * first was. A redirect to another origin is refused: the configured headers may carry secrets
 * meant for this origin only. `requestOf` gives the first hop's Request, built only for a redirect.
 */
async function followRedirects(
  requestOf: () => Request,
  first: { response: Response; url: URL },
  guard: Guard,
  body: BodyInit | null,
  resendable: boolean,
): Promise<Response> {
  let { response, url } = first;
  let request: Request | undefined;
  for (let hop = 0; ; hop++) {
    const location = REDIRECTS.has(response.status) ? response.headers.get("location") : null;
    if (location === null) return response;
    request ??= requestOf();
    await response.body?.cancel();
    const next = new URL(location, url);
    if (next.origin !== url.origin) {
      throw guard.refuse(url.origin, `it redirects to another origin (${next.origin}); set the configured URL to the final address`);
    }
    if (hop >= MAX_REDIRECTS) throw guard.refuse(url.origin, `more than ${MAX_REDIRECTS} redirects`);
    if (response.status === 303) request = new Request(next, { method: "GET", headers: request.headers, signal: request.signal });
    else if (resendable) request = new Request(next, { method: request.method, headers: request.headers, signal: request.signal, body });
    else request = new Request(next, request);
    ({ response, url } = await fetchHop(request.url, sendHop(request, resendable), guard));
  }
}

async function assertResolvesPublic(refuse: RefuseUrl, url: URL, env: Env, resolve: HostResolver, trusted: Map<string, number>): Promise<void> {
  // Local development may use loopback and has no network for lookups; IP literals were checked already.
  if (isLocalDevelopment(env) || hostProblem(url.hostname) !== null || isIpLiteral(url.hostname)) return;
  if ((trusted.get(url.hostname) ?? 0) > Date.now()) return;
  let addresses: string[];
  try {
    addresses = await resolve(url.hostname);
  } catch (error) {
    throw refuse(url.origin, `its host could not be resolved to check that it is public (${String(error)})`);
  }
  if (addresses.length === 0) throw refuse(url.origin, "its host has no addresses");
  for (const address of addresses) {
    const problem = hostProblem(address.includes(":") ? `[${address}]` : address);
    if (problem) throw refuse(url.origin, `its host resolves to a ${problem.reason} (${address})`);
  }
  trusted.set(url.hostname, Date.now() + RESOLVED_TTL_MS);
}

function isIpLiteral(hostname: string): boolean {
  return hostname.startsWith("[") || /^[0-9.]+$/.test(hostname);
}
