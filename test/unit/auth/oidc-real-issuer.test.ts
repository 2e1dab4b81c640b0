import { OAuth2Server } from "oauth2-mock-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { UpstreamSignInError } from "../../../src/auth/auth-errors";
import type { UpstreamData } from "../../../src/auth/identity/identity-provider";
import { oidcIdentityProvider } from "../../../src/auth/identity/oidc-identity-provider";
import { randomToken } from "../../../src/auth/pkce";

// Node-side: a real OIDC server from npm (oauth2-mock-server) on loopback as the upstream
// provider, driven through our OIDC provider's authorize URL, callback and ID-token checks.
const server = new OAuth2Server();
let issuer = "";
const callbackUrl = "http://127.0.0.1:8787/auth/callback";

beforeAll(async () => {
  await server.issuer.keys.generate("RS256");
  await server.start(0, "127.0.0.1");
  issuer = (server.issuer.url ?? "").replace(/\/+$/, "");
});
afterAll(async () => {
  await server.stop();
});

function provider() {
  return oidcIdentityProvider(
    {
      IDP: "oidc",
      OIDC_ISSUER: issuer,
      OIDC_CLIENT_ID: "slipsnisse",
      OIDC_CLIENT_SECRET: "secret",
      OIDC_SCOPES: "openid email profile",
      OIDC_GROUPS_CLAIM: "groups",
    },
    (input, init) => fetch(input, init),
  );
}

async function signIn(claims: Record<string, unknown>) {
  const idp = provider();
  const data: UpstreamData = { verifier: randomToken(), nonce: randomToken() };
  const authorize = await idp.authorizeUrl({ state: "state-1", callbackUrl, data });
  expect(new URL(authorize).searchParams.get("code_challenge_method")).toBe("S256");
  const handler = (token: { payload: Record<string, unknown> }) => Object.assign(token.payload, claims);
  // Fires for the access token and the ID token alike; keep it on for the whole exchange.
  server.service.on("beforeTokenSigning", handler);
  const redirect = await fetch(authorize, { redirect: "manual", signal: AbortSignal.timeout(5000) });
  const location = redirect.headers.get("location") ?? "";
  expect(new URL(location).searchParams.get("state")).toBe("state-1");
  try {
    return await idp.finish({ request: new Request(location), callbackUrl, data });
  } finally {
    server.service.off("beforeTokenSigning", handler);
  }
}

describe("OIDC sign-in against oauth2-mock-server", () => {
  it("discovers the issuer, exchanges the code with PKCE and reads the verified ID token", async () => {
    const identity = await signIn({ sub: "kc-user-1", email: "ada@example.com", email_verified: true, preferred_username: "ada", groups: ["engineering"] });
    expect(identity).toEqual({ provider: "oidc", subject: "kc-user-1", login: "ada", email: "ada@example.com", groups: ["engineering"] });
  });

  it("refuses an ID token minted for another client", async () => {
    await expect(signIn({ aud: "someone-else" })).rejects.toBeInstanceOf(UpstreamSignInError);
  });

  it("refuses an ID token whose nonce is not this sign-in's", async () => {
    await expect(signIn({ nonce: "replayed-nonce" })).rejects.toThrow(/nonce/);
  });
});
