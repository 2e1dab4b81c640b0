import { z } from "zod";
import { UpstreamSignInError } from "../auth-errors";
import { fetchJwks, type PublicJwk } from "./jwks-cache";
import { base64UrlDecode } from "../../base64url";

const headerSchema = z.object({ alg: z.string(), kid: z.string().optional(), typ: z.string().optional() });
const claimsSchema = z
  .object({
    iss: z.string(),
    sub: z.string().min(1),
    aud: z.union([z.string(), z.array(z.string())]),
    exp: z.number(),
    iat: z.number().optional(),
    nbf: z.number().optional(),
  })
  .loose();
export type JwtClaims = z.infer<typeof claimsSchema>;

const algorithms = {
  RS256: { import: { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" }, verify: { name: "RSASSA-PKCS1-v1_5" } },
  ES256: { import: { name: "ECDSA", namedCurve: "P-256" }, verify: { name: "ECDSA", hash: "SHA-256" } },
} as const;
type Algorithm = keyof typeof algorithms;
const isAlgorithm = (alg: string): alg is Algorithm => Object.hasOwn(algorithms, alg);

export interface VerifyJwtOptions {
  provider: string;
  jwksUrl: string;
  issuer: string;
  audience: string;
  upstreamFetch: typeof fetch;
  /** Clock skew allowed on exp/nbf/iat, seconds. */
  skewSeconds?: number;
}

/**
 * Verifies a compact JWS (RS256 or ES256; `none` and HMAC are refused, so a forged header
 * cannot pick a weaker check) with the issuer's JWKS through WebCrypto, then the registered
 * claims: iss exact, aud contains ours, exp/nbf/iat within skew.
 */
export async function verifyJwt(token: string, options: VerifyJwtOptions): Promise<JwtClaims> {
  const fail = (detail: string) => new UpstreamSignInError(options.provider, "verifying the signed identity token", detail);
  const parts = token.split(".");
  if (parts.length !== 3) throw fail("the token is not a compact JWS");
  const [encodedHeader = "", encodedPayload = "", encodedSignature = ""] = parts;
  const header = headerSchema.safeParse(decodeJson(encodedHeader));
  if (!header.success || !isAlgorithm(header.data.alg)) throw fail("the token's algorithm is not RS256 or ES256");
  const alg = header.data.alg;
  const signed = new TextEncoder().encode(`${encodedHeader}.${encodedPayload}`);
  const signature = base64UrlDecode(encodedSignature);
  let verified = await verifyWithKeys(await fetchJwks(options.upstreamFetch, options.jwksUrl, options.provider), header.data.kid, alg, signature, signed);
  if (verified === "no-key") {
    verified = await verifyWithKeys(await fetchJwks(options.upstreamFetch, options.jwksUrl, options.provider, true), header.data.kid, alg, signature, signed);
  }
  if (verified !== "valid") throw fail(verified === "no-key" ? "no signing key matches the token" : "the signature does not verify");
  const claims = claimsSchema.safeParse(decodeJson(encodedPayload));
  if (!claims.success) throw fail("the token lacks iss, sub, aud or exp");
  checkClaims(claims.data, options, fail);
  return claims.data;
}

async function verifyWithKeys(
  keys: PublicJwk[],
  kid: string | undefined,
  alg: Algorithm,
  signature: Uint8Array,
  signed: Uint8Array,
): Promise<"valid" | "invalid" | "no-key"> {
  const kty = alg === "RS256" ? "RSA" : "EC";
  const candidates = keys.filter(
    (key) => key.kty === kty && (kid === undefined || key.kid === kid) && (key.alg === undefined || key.alg === alg) && key.use !== "enc",
  );
  if (candidates.length === 0) return "no-key";
  for (const jwk of candidates) {
    // A malformed key in the provider's JWKS verifies nothing; it must not fail the sign-in with a 500.
    const key = await crypto.subtle.importKey("jwk", jwk, algorithms[alg].import, false, ["verify"]).catch(() => undefined);
    if (key && (await crypto.subtle.verify(algorithms[alg].verify, key, signature, signed).catch(() => false))) return "valid";
  }
  return "invalid";
}

function checkClaims(claims: JwtClaims, options: VerifyJwtOptions, fail: (detail: string) => Error): void {
  const now = Math.floor(Date.now() / 1000);
  const skew = options.skewSeconds ?? 60;
  if (claims.iss !== options.issuer) throw fail(`the issuer is ${claims.iss}, expected ${options.issuer}`);
  const audiences = Array.isArray(claims.aud) ? claims.aud : [claims.aud];
  if (!audiences.includes(options.audience)) throw fail("the token was issued for another audience");
  if (claims.exp + skew < now) throw fail("the token has expired");
  if (claims.nbf !== undefined && claims.nbf - skew > now) throw fail("the token is not valid yet");
  if (claims.iat !== undefined && claims.iat - skew > now) throw fail("the token was issued in the future");
}

function decodeJson(segment: string): unknown {
  try {
    return JSON.parse(new TextDecoder().decode(base64UrlDecode(segment)));
  } catch {
    return undefined;
  }
}
