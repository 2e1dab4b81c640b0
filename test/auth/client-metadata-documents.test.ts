import {
  Client,
  type OAuthClientProvider,
  type StoredOAuthClientInformation,
  type StoredOAuthTokens,
  StreamableHTTPClientTransport,
  UnauthorizedError,
} from "@modelcontextprotocol/client";
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { ensureMetadataDocumentClient } from "../../src/auth/cimd/client-metadata-document";
import { guardedOutboundFetch } from "../../src/downstream/guarded-fetch";
import { refuseDownstreamUrl } from "../../src/downstream/url-guard";
import { authTestWorker, devVars, loopbackOrigin, mcpWhoamiWorker, type TestWorker } from "./helpers/auth-test-worker";
import { authorizeThroughDev, browserSignIn, discover, exchangeCode, openConsent, refresh, tokenRequest } from "./helpers/oauth-test-client";

/**
 * Issue 37: a client that names itself by a Client ID Metadata Document URL signs in end to end.
 * The Worker fetches the document through the fetch it was given (src/index.ts hands in the
 * guarded outbound fetch), validates it, and the provider then treats the client as registered:
 * redirect URIs match exactly, PKCE and the rest as for any client.
 */
const mcpUrl = `${loopbackOrigin}/mcp`;

interface Served {
  body: string;
  status?: number;
  headers?: Record<string, string>;
}

/** A Worker whose CIMD fetch serves `documents` by URL and counts the fetches. */
function cimdWorker(documents: Map<string, Served>): TestWorker & { fetched: string[] } {
  const fetched: string[] = [];
  const worker = authTestWorker(devVars, undefined, () => async (url) => {
    fetched.push(url);
    const served = documents.get(url);
    if (!served) return new Response("not found", { status: 404 });
    return new Response(served.body, { status: served.status ?? 200, headers: { "content-type": "application/json", ...served.headers } });
  });
  return { ...worker, fetched };
}

function documentFor(clientId: string, redirectUris: string[], extra: Record<string, unknown> = {}): Served {
  return {
    body: JSON.stringify({ client_id: clientId, client_name: "CIMD Test Client", redirect_uris: redirectUris, token_endpoint_auth_method: "none", ...extra }),
  };
}

const unique = (label: string) => `https://app.cimd-client.dev/${label}-${crypto.randomUUID().slice(0, 8)}/metadata.json`;

describe("Client ID Metadata Documents", () => {
  for (const [kind, redirectUri] of [
    ["an https callback", "https://client.example/oauth/callback"],
    ["a loopback callback", "http://127.0.0.1:33418/callback"],
    ["a native app scheme", "com.example.app:/oauth/callback"],
  ] as const) {
    it(`a URL client id signs in, gets tokens that open /mcp and refreshes, with ${kind}`, async () => {
      const clientId = unique("flow");
      const worker = cimdWorker(new Map([[clientId, documentFor(clientId, [redirectUri])]]));
      const discovery = await discover(worker, mcpUrl);
      const code = await authorizeThroughDev(worker, discovery, { clientId, redirectUri });
      expect(code.redirect.toString().startsWith(redirectUri)).toBe(true);
      const tokens = await exchangeCode(worker, discovery, clientId, redirectUri, code);
      const api = await worker.fetch(mcpUrl, { method: "POST", body: "{}", headers: { Authorization: `Bearer ${tokens.access_token}` } });
      expect(api.status).toBe(200);
      expect(((await api.json()) as { props: { login: string } }).props.login).toBe("alice");
      const refreshed = await refresh(worker, discovery, clientId, tokens.refresh_token ?? "");
      expect(refreshed.status, await refreshed.clone().text()).toBe(200);
    });
  }

  it("advertises client_id_metadata_document_supported and keeps dynamic registration", async () => {
    const worker = cimdWorker(new Map());
    const metadata = (await (await worker.fetch(`${loopbackOrigin}/.well-known/oauth-authorization-server`)).json()) as Record<string, unknown>;
    expect(metadata.client_id_metadata_document_supported).toBe(true);
    expect(metadata.registration_endpoint).toBe(`${loopbackOrigin}/register`);
  });

  it("a redirect_uri the document does not list exactly is refused without a redirect", async () => {
    const clientId = unique("redirect");
    const worker = cimdWorker(new Map([[clientId, documentFor(clientId, ["https://client.example/oauth/callback"])]]));
    const discovery = await discover(worker, mcpUrl);
    for (const redirectUri of ["https://client.example/oauth/callback/", "https://client.example/oauth/callback?x=1", "https://evil.example/oauth/callback"]) {
      const { consent } = await openConsent(worker, discovery, { clientId, redirectUri }, "v".repeat(43));
      expect(consent.status, redirectUri).toBe(400);
      expect(consent.headers.get("location")).toBeNull();
    }
  });

  for (const [label, served] of [
    ["names another client_id", (id: string) => documentFor(`${id}x`, ["https://client.example/cb"])],
    ["is over 5 KB", (id: string) => documentFor(id, ["https://client.example/cb"], { padding: "x".repeat(6_000) })],
    ["answers 404", () => ({ body: "{}", status: 404 })],
    ["is not JSON", () => ({ body: "<html>" })],
    ["has no redirect_uris", (id: string) => ({ body: JSON.stringify({ client_id: id }) })],
    ["lists a javascript: redirect URI", (id: string) => documentFor(id, ["javascript:alert(1)"])],
    ["asks for a client secret method", (id: string) => documentFor(id, ["https://client.example/cb"], { token_endpoint_auth_method: "client_secret_basic" })],
  ] as const) {
    it(`a document that ${label} gets the unknown client's answer at /authorize and /token, never a 500`, async () => {
      const clientId = unique("bad");
      const worker = cimdWorker(new Map([[clientId, served(clientId)]]));
      const discovery = await discover(worker, mcpUrl);
      const { consent } = await openConsent(worker, discovery, { clientId, redirectUri: "https://client.example/cb" }, "v".repeat(43));
      expect(consent.status).toBe(400);
      expect(await consent.text()).toContain("This sign-in cannot continue");
      const token = await tokenRequest(worker, discovery, {
        grant_type: "authorization_code",
        code: "a:b:c",
        client_id: clientId,
        code_verifier: "v".repeat(43),
      });
      expect(token.status).toBe(401);
      expect(((await token.json()) as { error: string }).error).toBe("invalid_client");
    });
  }

  it("caches a document by its Cache-Control: two sign-ins, one fetch", async () => {
    const clientId = unique("cache");
    const worker = cimdWorker(new Map([[clientId, { ...documentFor(clientId, ["https://client.example/cb"]), headers: { "cache-control": "max-age=600" } }]]));
    const discovery = await discover(worker, mcpUrl);
    for (let round = 0; round < 2; round++) {
      const code = await authorizeThroughDev(worker, discovery, { clientId, redirectUri: "https://client.example/cb" });
      await exchangeCode(worker, discovery, clientId, "https://client.example/cb", code);
    }
    expect(worker.fetched.filter((url) => url === clientId)).toHaveLength(1);
  });

  it("through the guarded fetch, a deployed tenant never fetches a document from a private, loopback or metadata address", async () => {
    const production = { ...env, ENVIRONMENT: "production" } as Env;
    const guarded = guardedOutboundFetch(refuseDownstreamUrl("client-metadata-document"), production);
    for (const clientId of [
      "https://10.1.2.3/client.json",
      "https://127.0.0.1/client.json",
      "https://169.254.169.254/latest/meta-data",
      "https://localhost/c.json",
    ]) {
      const problem = await ensureMetadataDocumentClient(env.OAUTH_KV, clientId, guarded, Date.now());
      expect(problem, clientId).toMatch(/could not be fetched \(Downstream server "client-metadata-document" has an unsafe URL/);
      expect(await env.OAUTH_KV.get(`client:${clientId}`)).toBeNull();
    }
  });

  it("the MCP SDK client with a clientMetadataUrl signs in by its document, without registering, and calls a tool", async () => {
    const documentUrl = unique("sdk");
    const callback = "http://127.0.0.1:33419/callback";
    const registrations: string[] = [];
    const worker = mcpWhoamiWorker(
      {
        config: devVars,
        clientMetadataFetch: () => async (url) =>
          url === documentUrl
            ? new Response(documentFor(documentUrl, [callback]).body, { headers: { "content-type": "application/json" } })
            : new Response("", { status: 404 }),
      },
      {
        text: (props) => String((props as { login?: string } | undefined)?.login),
        onRequest: (request) => {
          if (new URL(request.url).pathname === "/register") registrations.push(request.url);
        },
      },
    );
    const call = worker.fetch;
    const provider: OAuthClientProvider & { url?: URL; stored?: StoredOAuthTokens; info?: StoredOAuthClientInformation; verifier: string } = {
      verifier: "",
      redirectUrl: callback,
      clientMetadataUrl: documentUrl,
      clientMetadata: { client_name: "CIMD SDK client", redirect_uris: [callback], token_endpoint_auth_method: "none" },
      clientInformation() {
        return this.info;
      },
      saveClientInformation(info) {
        this.info = info;
      },
      tokens() {
        return this.stored;
      },
      saveTokens(tokens) {
        this.stored = tokens;
      },
      redirectToAuthorization(url) {
        this.url = url;
      },
      saveCodeVerifier(verifier) {
        this.verifier = verifier;
      },
      codeVerifier() {
        return this.verifier;
      },
    };
    const url = new URL(`${loopbackOrigin}/mcp`);
    const first = new StreamableHTTPClientTransport(url, { authProvider: provider, fetch: call });
    await expect(new Client({ name: "sdk", version: "0" }).connect(first)).rejects.toBeInstanceOf(UnauthorizedError);
    expect(provider.url?.searchParams.get("client_id")).toBe(documentUrl);
    const redirect = await browserSignIn({ fetch: call, helpers: () => worker.helpers(loopbackOrigin) }, provider.url?.toString() ?? "");
    await first.finishAuth(redirect.searchParams);
    const client = new Client({ name: "sdk", version: "0" });
    await client.connect(new StreamableHTTPClientTransport(url, { authProvider: provider, fetch: call }));
    expect(await client.callTool({ name: "whoami", arguments: {} })).toMatchObject({ content: [{ type: "text", text: "alice" }] });
    expect(registrations).toEqual([]);
    expect(provider.info?.client_id).toBe(documentUrl);
    await client.close();
  });
});
