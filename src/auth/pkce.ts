import { base64Url } from "../base64url";

/** 32 random bytes, base64url: a PKCE verifier (RFC 7636 §4.1 wants 43-128 chars) or a nonce. */
export function randomToken(): string {
  return base64Url(crypto.getRandomValues(new Uint8Array(32)));
}

export async function s256Challenge(verifier: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier));
  return base64Url(new Uint8Array(digest));
}
