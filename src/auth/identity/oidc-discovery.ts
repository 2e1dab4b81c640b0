import { z } from "zod";
import { UpstreamSignInError } from "../auth-errors";
import type { UpstreamFetch } from "./identity-provider";

const discoverySchema = z.object({
  issuer: z.string(),
  authorization_endpoint: z.url(),
  token_endpoint: z.url(),
  jwks_uri: z.url(),
});
export type OidcDiscovery = z.infer<typeof discoverySchema>;

const cacheMs = 60 * 60 * 1000;
const cache = new Map<string, { at: number; document: OidcDiscovery }>();

/** OpenID Connect Discovery 1.0 §4, with the §4.3 rule that the document's issuer is exactly ours. */
export async function discoverOidc(upstreamFetch: UpstreamFetch, issuer: string): Promise<OidcDiscovery> {
  const hit = cache.get(issuer);
  if (hit && Date.now() - hit.at < cacheMs) return hit.document;
  const url = `${issuer}/.well-known/openid-configuration`;
  const fail = (detail: string) => new UpstreamSignInError("the OIDC provider", "discovery", detail);
  const response = await upstreamFetch(url, { headers: { Accept: "application/json" }, signal: AbortSignal.timeout(10_000) });
  if (!response.ok) throw fail(`HTTP ${response.status} from ${url}`);
  const parsed = discoverySchema.safeParse(await response.json());
  if (!parsed.success) throw fail(`${url} is not an OpenID configuration document`);
  if (parsed.data.issuer.replace(/\/+$/, "") !== issuer) throw fail(`the document names issuer ${parsed.data.issuer}, expected ${issuer} (check OIDC_ISSUER)`);
  cache.set(issuer, { at: Date.now(), document: parsed.data });
  return parsed.data;
}
