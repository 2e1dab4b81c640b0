import { base64Url } from "../../../src/base64url";

/** A real RS256 key pair for fake upstream providers: they sign, our code verifies with WebCrypto. */
export interface TestSigningKey {
  kid: string;
  publicJwk: JsonWebKey & { kid: string; alg: string; use: string };
  sign(claims: Record<string, unknown>): Promise<string>;
}

export async function testSigningKey(kid: string): Promise<TestSigningKey> {
  const pair = await crypto.subtle.generateKey(
    { name: "RSASSA-PKCS1-v1_5", modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash: "SHA-256" },
    true,
    ["sign", "verify"],
  );
  if (!("privateKey" in pair)) throw new Error("expected a key pair");
  const exported = await crypto.subtle.exportKey("jwk", pair.publicKey);
  if (exported instanceof ArrayBuffer) throw new Error("expected a JWK");
  const publicJwk = { ...exported, kid, alg: "RS256", use: "sig" };
  return {
    kid,
    publicJwk,
    async sign(claims) {
      const encode = (value: unknown) => base64Url(new TextEncoder().encode(JSON.stringify(value)));
      const input = `${encode({ alg: "RS256", typ: "JWT", kid })}.${encode(claims)}`;
      const signature = await crypto.subtle.sign("RSASSA-PKCS1-v1_5", pair.privateKey, new TextEncoder().encode(input));
      return `${input}.${base64Url(new Uint8Array(signature))}`;
    },
  };
}
