import { env, runInDurableObject, SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { connectionsStub, type ConnectionTarget } from "../../../src/downstream/connections/connection-target";
import type { StoredTokens } from "../../../src/downstream/connections/connection-schema";
import { TokenCipher } from "../../../src/downstream/connections/token-cipher";
import { ConnectionOAuthProvider } from "../../../src/downstream/connections/connection-oauth-provider";
import { withoutClientSecret } from "../../../src/downstream/connections/client-secret-forms";
import { ClientCredentialsUnsupportedError, ConnectionRequiredError } from "../../../src/downstream/connections/connection-errors";
import { storeConnection } from "../../support/workers/stored-connection";
import { echoBase, pool, serverConfig } from "../downstream-test-helpers";

const ACCESS = "acc-7d1e0c55-connected-token";
const REFRESH = "ref-91b2aa40-refresh-token";
const CLIENT_SECRET = "cs-3f0e-client-secret";

function target(url: string, overrides: Partial<ConnectionTarget> = {}): ConnectionTarget {
  return { serverId: "linear", skill: "default", url, connection: "user", scopes: ["read"], ...overrides };
}

function seed(userId: string, url: string, tokens: StoredTokens): Promise<void> {
  return storeConnection({ kind: "user", userId }, target(url), tokens, { client: { client_id: "cid-1", client_secret: CLIENT_SECRET }, connectedBy: userId });
}

async function rawRows(userId: string): Promise<string> {
  return runInDurableObject(connectionsStub(env, { kind: "user", userId }), async (_instance, state) =>
    JSON.stringify([state.storage.sql.exec(`SELECT * FROM connections`).toArray(), state.storage.sql.exec(`SELECT * FROM connect_flows`).toArray()]),
  );
}

describe("UserConnections", () => {
  it("stores tokens and the client secret sealed (AES-GCM), never in the clear, and hands the token back only to its owner", async () => {
    const url = "https://linear.example/mcp";
    await seed("u-alice", url, { access_token: ACCESS, refresh_token: REFRESH, token_type: "Bearer", expires_in: 3600, scope: "read" });
    const raw = await rawRows("u-alice");
    expect(raw).toContain("linear");
    for (const secret of [ACCESS, REFRESH, CLIENT_SECRET]) expect(raw).not.toContain(secret);

    const alice = connectionsStub(env, { kind: "user", userId: "u-alice" });
    expect(await alice.accessToken(target(url))).toMatchObject({ token: ACCESS });
    const [listed] = await alice.list();
    expect(listed).toMatchObject({ serverId: "linear", skill: "default", scope: "read", connectedBy: "u-alice" });
    expect(JSON.stringify(await alice.list())).not.toContain(ACCESS);

    const bob = connectionsStub(env, { kind: "user", userId: "u-bob" });
    expect(await bob.accessToken(target(url))).toEqual({ missing: "it is not connected" });
  });

  it("a sealed value opens only with its own context and key", async () => {
    const cipher = await TokenCipher.fromEnv(env);
    const sealed = await cipher.seal({ access_token: ACCESS }, "tokens https://a.example/mcp");
    expect(sealed).not.toContain(ACCESS);
    expect(await cipher.open(sealed, "tokens https://a.example/mcp")).toEqual({ access_token: ACCESS });
    // Moved to another server's row: the additional data differs, so it does not decrypt.
    expect(await cipher.open(sealed, "tokens https://b.example/mcp")).toBeUndefined();
    const other = await TokenCipher.fromEnv({ ...env, CONNECTIONS_KEY: "another-connections-key-0123456789abcdef" } as Env);
    expect(await other.open(sealed, "tokens https://a.example/mcp")).toBeUndefined();
    await expect(TokenCipher.fromEnv({ ...env, CONNECTIONS_KEY: "short" } as Env)).rejects.toMatchObject({ kind: "connections-key-missing" });
  });

  it("a token the server refused, with no refresh token, ends the connection; so does an expired one", async () => {
    const url = "https://refused.example/mcp";
    await seed("u-carl", url, { access_token: ACCESS, token_type: "Bearer", expires_in: 3600 });
    const carl = connectionsStub(env, { kind: "user", userId: "u-carl" });
    expect(await carl.accessToken(target(url), "some-older-token")).toMatchObject({ token: ACCESS });
    expect(await carl.accessToken(target(url), ACCESS)).toEqual({ missing: "the server refused its token" });
    expect(await carl.status(url)).toBeNull();

    const expired = "https://expired.example/mcp";
    await seed("u-carl", expired, { access_token: ACCESS, token_type: "Bearer", expires_in: -10 });
    expect(await carl.accessToken(target(expired))).toEqual({ missing: "its token expired and the server gave no refresh token" });
  });

  it("removing one connection or all of them forgets the tokens", async () => {
    const dana = connectionsStub(env, { kind: "user", userId: "u-dana" });
    await seed("u-dana", "https://one.example/mcp", { access_token: ACCESS, token_type: "Bearer" });
    await seed("u-dana", "https://two.example/mcp", { access_token: ACCESS, token_type: "Bearer" });
    expect(await dana.remove("https://one.example/mcp")).toBe(true);
    expect((await dana.list()).map((row) => row.serverKey)).toEqual(["https://two.example/mcp"]);
    expect(await dana.removeAll()).toBe(1);
    expect(await dana.list()).toEqual([]);
  });

  it("a server that serves no OAuth metadata cannot be connected: the answer names what is missing", async () => {
    const url = `${echoBase("no-oauth")}/mcp`;
    const answer = await connectionsStub(env, { kind: "user", userId: "u-erin" }).startFlow(target(url), "http://127.0.0.1:8787/connect/callback", "erin");
    expect(answer).toMatchObject({ failed: expect.stringContaining("protected-resource metadata (RFC 9728") });
    expect(await rawRows("u-erin")).toBe("[[],[]]");
  });

  it("serves its Client ID Metadata Document, and offers it as the client id only on an https origin", async () => {
    const response = await SELF.fetch("http://localhost/connect/client-metadata.json");
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({
      client_id: "http://localhost/connect/client-metadata.json",
      redirect_uris: ["http://localhost/connect/callback"],
      token_endpoint_auth_method: "none",
    });
    const cipher = await TokenCipher.fromEnv(env);
    const https = new ConnectionOAuthProvider(env, cipher, { target: target("https://a.example/mcp"), redirectUrl: "https://slip.example/connect/callback" });
    expect(https.clientMetadataUrl).toBe("https://slip.example/connect/client-metadata.json");
    const local = new ConnectionOAuthProvider(env, cipher, { target: target("https://a.example/mcp"), redirectUrl: "http://127.0.0.1:8787/connect/callback" });
    expect(local.clientMetadataUrl).toBeUndefined();
  });

  it("the pool refuses a server with auth until the member connects, without backing off", async () => {
    const config = serverConfig({ url: `${echoBase("needs-auth")}/mcp`, transport: "streamable-http", auth: { type: "oauth" } });
    const open = pool({ docs: config }, { userId: "u-frank", toolPins: false });
    try {
      const needed = await open.connectionNeeded("docs");
      expect(needed).toBeInstanceOf(ConnectionRequiredError);
      expect(needed?.message).toContain('"docs" needs your connection: it is not connected');
      await expect(open.callTool("docs", "echo", { text: "x" })).rejects.toBeInstanceOf(ConnectionRequiredError);
      expect(open.states().docs).toEqual({ status: "idle" });
    } finally {
      await open.close();
    }
  });
});

describe("client credentials (team connections with grant client_credentials)", () => {
  const machine = (overrides: Partial<ConnectionTarget> = {}) =>
    target("https://m2m.example/mcp", {
      connection: "team",
      grant: "client_credentials",
      clientIdSecret: "M2M_CLIENT_ID",
      clientSecretSecret: "M2M_CLIENT_SECRET",
      ...overrides,
    });

  it("asks for a token without a redirect, and only from an authorization server whose metadata lists the grant", async () => {
    const cipher = await TokenCipher.fromEnv(env);
    const provider = new ConnectionOAuthProvider(env, cipher, { target: machine(), redirectUrl: "https://invalid.invalid/connect/callback" });
    expect(provider.redirectUrl).toBeUndefined();
    expect(provider.clientMetadata).toMatchObject({ grant_types: ["client_credentials"], token_endpoint_auth_method: "client_secret_basic" });
    expect(() => provider.prepareTokenRequest("read")).toThrow(ClientCredentialsUnsupportedError);
    provider.saveDiscoveryState({
      authorizationServerUrl: "https://as.example",
      authorizationServerMetadata: {
        issuer: "https://as.example",
        authorization_endpoint: "https://as.example/authorize",
        token_endpoint: "https://as.example/token",
        response_types_supported: ["code"],
        grant_types_supported: ["authorization_code"],
      },
    });
    expect(() => provider.prepareTokenRequest("read")).toThrow(ClientCredentialsUnsupportedError);
    provider.current.discovery = {
      authorizationServerUrl: "https://as.example",
      authorizationServerMetadata: { ...provider.current.discovery?.authorizationServerMetadata, grant_types_supported: ["client_credentials"] } as never,
    };
    expect(provider.prepareTokenRequest("read")?.toString()).toBe("grant_type=client_credentials&scope=read");

    // The authorization-code flow keeps the SDK's default token request.
    const user = new ConnectionOAuthProvider(env, cipher, { target: target("https://a.example/mcp"), redirectUrl: "https://slip.example/connect/callback" });
    expect(user.redirectUrl).toBe("https://slip.example/connect/callback");
    expect(user.prepareTokenRequest("read")).toBeUndefined();
  });

  it("a token endpoint that echoes the client secret (alone, URL- or form-encoded, or in either Basic form) has it removed from what is reported", () => {
    const secrets = { ...env, M2M_CLIENT_ID: "m2m id", M2M_CLIENT_SECRET: "s3cr/t+x !" } as Env;
    const rfcBasic = btoa(`${encodeURIComponent("m2m id")}:${encodeURIComponent("s3cr/t+x !")}`);
    const sdkBasic = btoa("m2m id:s3cr/t+x !");
    const form = new URLSearchParams({ client_secret: "s3cr/t+x !" }).toString();
    const text = `invalid_client: got s3cr/t+x !, ${encodeURIComponent("s3cr/t+x !")} in Basic ${rfcBasic} or Basic ${sdkBasic}; ${form}`;
    const cleaned = withoutClientSecret(secrets, machine(), text);
    expect(cleaned).toBe("invalid_client: got [redacted], [redacted] in Basic [redacted] or Basic [redacted]; client_secret=[redacted]");
  });

  it("a member's run never starts a browser sign-in for it: startFlow answers why the token could not be fetched", async () => {
    const answer = await connectionsStub(env, { kind: "team" }).startFlow(
      machine({ url: `${echoBase("m2m-no-metadata")}/mcp` }),
      "http://127.0.0.1:8787/connect/callback",
      "alice",
    );
    expect(answer).toMatchObject({ failed: expect.stringContaining("its token could not be fetched with the client credentials") });
  });
});
