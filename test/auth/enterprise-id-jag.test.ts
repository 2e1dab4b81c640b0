import { Client, CrossAppAccessProvider, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { base64Url } from "../../src/base64url";
import { devVars, loopbackOrigin, mcpWhoamiWorker } from "./helpers/auth-test-worker";

/**
 * Issue 37, enterprise-managed authorization (SEP-990): the tenant trusts one enterprise IdP;
 * a client presents an ID-JAG that IdP minted for this server (signed here with the test's own
 * key) through the MCP SDK's cross-app access provider and reaches a tool as the member the
 * assertion names. Forged, misdirected, stale, replayed and non-member assertions get nothing.
 */
const ISSUER = "https://idp.corp-example.dev";
const JWKS = `${ISSUER}/keys`;
const vars = { ...devVars, ALLOWED_EMAIL_DOMAINS: "corp-example.dev", ENTERPRISE_IDP_ISSUER: ISSUER, ENTERPRISE_IDP_JWKS_URI: JWKS };

const pair = (await crypto.subtle.generateKey(
  { name: "RSASSA-PKCS1-v1_5", modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash: "SHA-256" },
  true,
  ["sign", "verify"],
)) as CryptoKeyPair;
const publicJwk = { ...((await crypto.subtle.exportKey("jwk", pair.publicKey)) as JsonWebKey), kid: "idp-1", alg: "RS256", use: "sig" };

async function idJag(
  claims: Record<string, unknown>,
  header: Record<string, unknown> = { alg: "RS256", typ: "oauth-id-jag+jwt", kid: "idp-1" },
): Promise<string> {
  const encode = (value: unknown) => base64Url(new TextEncoder().encode(JSON.stringify(value)));
  const input = `${encode(header)}.${encode(claims)}`;
  if (header.alg === "none") return `${input}.`;
  const signature = await crypto.subtle.sign("RSASSA-PKCS1-v1_5", pair.privateKey, new TextEncoder().encode(input));
  return `${input}.${base64Url(new Uint8Array(signature))}`;
}

const worker = mcpWhoamiWorker({ config: vars });
const call = worker.fetch;

/** A confidential client registered by DCR: the grant needs client authentication. */
async function confidentialClient(): Promise<{ clientId: string; clientSecret: string }> {
  const response = await call(`${loopbackOrigin}/register`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      client_name: "Enterprise agent",
      redirect_uris: ["https://agent.corp-example.dev/cb"],
      token_endpoint_auth_method: "client_secret_basic",
      grant_types: ["authorization_code", "urn:ietf:params:oauth:grant-type:jwt-bearer"],
      response_types: ["code"],
    }),
  });
  const body = (await response.json()) as { client_id: string; client_secret: string };
  expect(response.status, JSON.stringify(body)).toBe(201);
  return { clientId: body.client_id, clientSecret: body.client_secret };
}

function claimsFor(clientId: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  const now = Math.floor(Date.now() / 1000);
  return {
    iss: ISSUER,
    sub: "00u-erin",
    aud: loopbackOrigin,
    resource: loopbackOrigin,
    client_id: clientId,
    jti: crypto.randomUUID(),
    iat: now,
    exp: now + 120,
    email: "erin@corp-example.dev",
    scope: "mcp",
    ...extra,
  };
}

async function jwtBearer(client: { clientId: string; clientSecret: string }, assertion: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await call(`${loopbackOrigin}/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", authorization: `Basic ${btoa(`${client.clientId}:${client.clientSecret}`)}` },
    body: new URLSearchParams({ grant_type: "urn:ietf:params:oauth:grant-type:jwt-bearer", assertion, resource: loopbackOrigin }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describe("enterprise-managed authorization (ID-JAG)", () => {
  beforeEach(() => {
    const realFetch = globalThis.fetch;
    vi.spyOn(globalThis, "fetch").mockImplementation((input, init) =>
      String(input instanceof Request ? input.url : input) === JWKS ? Promise.resolve(Response.json({ keys: [publicJwk] })) : realFetch(input, init),
    );
  });
  afterEach(() => vi.restoreAllMocks());

  it("the SDK's cross-app access provider gets a token for the member the ID-JAG names and calls a tool", async () => {
    const client = await confidentialClient();
    const provider = new CrossAppAccessProvider({
      ...client,
      expectedIssuer: loopbackOrigin,
      fetchFn: call,
      assertion: async (context) => idJag(claimsFor(client.clientId, { aud: context.authorizationServerUrl.replace(/\/$/, "") })),
    });
    const sdk = new Client({ name: "enterprise-agent", version: "1.0.0" });
    await sdk.connect(new StreamableHTTPClientTransport(new URL(`${loopbackOrigin}/mcp`), { authProvider: provider, fetch: call }));
    const result = await sdk.callTool({ name: "whoami", arguments: {} });
    const props = JSON.parse((result.content as Array<{ text: string }>)[0]?.text ?? "null") as Record<string, unknown>;
    expect(props).toMatchObject({
      userId: "enterprise-00u-erin",
      login: "erin@corp-example.dev",
      email: "erin@corp-example.dev",
      role: "member",
      idp: "enterprise",
    });
    await sdk.close();
  });

  it("advertises the JWT bearer grant", async () => {
    const metadata = (await (await call(`${loopbackOrigin}/.well-known/oauth-authorization-server`)).json()) as { grant_types_supported: string[] };
    expect(metadata.grant_types_supported).toContain("urn:ietf:params:oauth:grant-type:jwt-bearer");
  });

  it("refuses a wrong audience, an expired, a replayed, an unsigned, another IdP's, another client's and a non-member's ID-JAG", async () => {
    const client = await confidentialClient();
    const replayed = await idJag(claimsFor(client.clientId));
    expect((await jwtBearer(client, replayed)).status).toBe(200);
    const cases: Array<[string, string]> = [
      ["replayed jti", replayed],
      ["wrong audience", await idJag(claimsFor(client.clientId, { aud: "https://other-server.corp-example.dev" }))],
      ["expired", await idJag(claimsFor(client.clientId, { iat: Math.floor(Date.now() / 1000) - 900, exp: Math.floor(Date.now() / 1000) - 600 }))],
      ["unsigned", await idJag(claimsFor(client.clientId), { alg: "none", typ: "oauth-id-jag+jwt" })],
      ["another IdP", await idJag(claimsFor(client.clientId, { iss: "https://idp.elsewhere-example.dev" }))],
      ["another client", await idJag(claimsFor("some-other-client"))],
      ["not a member (email outside ALLOWED_EMAIL_DOMAINS)", await idJag(claimsFor(client.clientId, { email: "eve@gmail-example.dev", sub: "00u-eve" }))],
      ["an email the IdP does not vouch for", await idJag(claimsFor(client.clientId, { email_verified: false, sub: "00u-frank" }))],
      ["signed by another key", `${(await idJag(claimsFor(client.clientId))).split(".").slice(0, 2).join(".")}.${base64Url(new Uint8Array(256))}`],
    ];
    for (const [label, assertion] of cases) {
      const answer = await jwtBearer(client, assertion);
      expect(answer.status, `${label}: ${JSON.stringify(answer.body)}`).toBe(400);
      expect(answer.body.error, label).toBe("invalid_grant");
      expect(answer.body.access_token, label).toBeUndefined();
    }
  });
});
