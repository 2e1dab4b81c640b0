import { z } from "zod";
import { UpstreamSignInError } from "../auth-errors";

const jwkSchema = z.object({ kty: z.string(), kid: z.string().optional(), alg: z.string().optional(), use: z.string().optional() }).loose();
const jwksSchema = z.object({ keys: z.array(jwkSchema) });
export type PublicJwk = z.infer<typeof jwksSchema>["keys"][number];

// Providers rotate keys by publishing the new one first; five minutes keeps rotation cheap.
const cacheMs = 5 * 60 * 1000;
const cache = new Map<string, { at: number; keys: PublicJwk[] }>();

/** The provider's signing keys; `refresh` skips the cache (an unknown kid after rotation). */
export async function fetchJwks(upstreamFetch: typeof fetch, url: string, provider: string, refresh = false): Promise<PublicJwk[]> {
  const hit = cache.get(url);
  if (!refresh && hit && Date.now() - hit.at < cacheMs) return hit.keys;
  const response = await upstreamFetch(url, { headers: { Accept: "application/json" }, signal: AbortSignal.timeout(10_000) });
  if (!response.ok) throw new UpstreamSignInError(provider, "fetching signing keys", `HTTP ${response.status} from ${url}`);
  const parsed = jwksSchema.safeParse(await response.json());
  if (!parsed.success) throw new UpstreamSignInError(provider, "fetching signing keys", `${url} is not a JWK set`);
  cache.set(url, { at: Date.now(), keys: parsed.data.keys });
  return parsed.data.keys;
}
