import { z } from "zod";
import { s256Challenge } from "../../../src/auth/pkce";
import { type TestSigningKey, testSigningKey } from "./test-signing-key";

export interface FakeOidcUser {
  sub: string;
  email?: unknown;
  /** A boolean from a well-behaved provider; tests also send what others do ("TRUE", 1). */
  email_verified?: unknown;
  preferred_username?: unknown;
  groups?: string[];
  /** Any other claim, malformed ones included (they override the issuer's own, nonce too). */
  [claim: string]: unknown;
}

interface PendingCode {
  user: FakeOidcUser;
  challenge: string;
  nonce: string;
  redirectUri: string;
  clientId: string;
}

export interface Tamper {
  nonce?: string;
  audience?: string;
  signWith?: TestSigningKey;
  expiresInSeconds?: number;
}

/**
 * An OIDC provider in the test isolate, reached through `upstreamFetch`: discovery, JWKS, and a
 * token endpoint that checks client auth, redirect URI and the PKCE verifier before it signs a
 * real RS256 ID token. The browser's visit to its authorize page is `signInAt`.
 */
export async function fakeOidcIssuer(issuer: string, clientId: string, clientSecret: string) {
  const key = await testSigningKey("issuer-key-1");
  const codes = new Map<string, PendingCode>();
  const seenChallenges: string[] = [];
  let tamper: Tamper = {};

  async function handle(request: Request): Promise<Response> {
    const url = new URL(request.url);
    if (!url.href.startsWith(`${issuer}/`)) return new Response("unknown host", { status: 502 });
    const path = url.pathname.slice(new URL(issuer).pathname.length);
    if (path === "/.well-known/openid-configuration") {
      return Response.json({ issuer, authorization_endpoint: `${issuer}/authorize`, token_endpoint: `${issuer}/token`, jwks_uri: `${issuer}/jwks` });
    }
    if (path === "/jwks") return Response.json({ keys: [key.publicJwk] });
    if (path === "/token" && request.method === "POST") return token(request);
    return new Response("not found", { status: 404 });
  }

  async function token(request: Request): Promise<Response> {
    const form = new URLSearchParams(await request.text());
    const basic = request.headers.get("Authorization") ?? "";
    if (basic !== `Basic ${btoa(`${clientId}:${clientSecret}`)}`) return Response.json({ error: "invalid_client" }, { status: 401 });
    const pending = codes.get(form.get("code") ?? "");
    codes.delete(form.get("code") ?? "");
    if (!pending || pending.redirectUri !== form.get("redirect_uri")) return Response.json({ error: "invalid_grant" }, { status: 400 });
    if ((await s256Challenge(form.get("code_verifier") ?? "")) !== pending.challenge)
      return Response.json({ error: "invalid_grant", error_description: "PKCE" }, { status: 400 });
    const now = Math.floor(Date.now() / 1000);
    const claims = {
      iss: issuer,
      aud: tamper.audience ?? clientId,
      iat: now,
      exp: now + (tamper.expiresInSeconds ?? 300),
      nonce: tamper.nonce ?? pending.nonce,
      ...pending.user,
    };
    const idToken = await (tamper.signWith ?? key).sign(claims);
    return Response.json({ access_token: "upstream-access-token", token_type: "Bearer", id_token: idToken });
  }

  return {
    fetch: ((input: RequestInfo | URL, init?: RequestInit) => handle(new Request(input, init))) satisfies typeof fetch,
    seenChallenges,
    setTamper(next: Tamper) {
      tamper = next;
    },
    /** The user signs in at the provider's authorize page, which redirects back with a code. */
    signInAt(authorizeUrl: string, user: FakeOidcUser): string {
      const url = new URL(authorizeUrl);
      const params = z
        .object({
          client_id: z.literal(clientId),
          redirect_uri: z.string(),
          state: z.string(),
          nonce: z.string(),
          code_challenge: z.string(),
          code_challenge_method: z.literal("S256"),
          scope: z.string().includes("openid"),
        })
        .parse(Object.fromEntries(url.searchParams));
      seenChallenges.push(params.code_challenge);
      const code = crypto.randomUUID();
      codes.set(code, { user, challenge: params.code_challenge, nonce: params.nonce, redirectUri: params.redirect_uri, clientId });
      const back = new URL(params.redirect_uri);
      back.searchParams.set("code", code);
      back.searchParams.set("state", params.state);
      return back.toString();
    },
  };
}
