import {
  Client,
  type OAuthClientProvider,
  type StoredOAuthClientInformation,
  type StoredOAuthTokens,
  StreamableHTTPClientTransport,
  UnauthorizedError,
} from "@modelcontextprotocol/client";
import { describe, expect, it } from "vitest";
import { claudeCallback, devVars, loopbackOrigin, mcpWhoamiWorker } from "./helpers/auth-test-worker";
import { browserSignIn } from "./helpers/oauth-test-client";

/** The MCP SDK's own OAuth client, with the browser leg driven by the test. */
class MemoryOAuthProvider implements OAuthClientProvider {
  readonly redirectUrl = claudeCallback;
  readonly clientMetadata = {
    client_name: "SDK OAuth client",
    redirect_uris: [claudeCallback],
    grant_types: ["authorization_code", "refresh_token"],
    response_types: ["code"],
    token_endpoint_auth_method: "none",
  };
  info: StoredOAuthClientInformation | undefined;
  stored: StoredOAuthTokens | undefined;
  verifier = "";
  authorizationUrl: URL | undefined;
  clientInformation() {
    return this.info;
  }
  saveClientInformation(info: StoredOAuthClientInformation) {
    this.info = info;
  }
  tokens() {
    return this.stored;
  }
  saveTokens(tokens: StoredOAuthTokens) {
    this.stored = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
}

const worker = mcpWhoamiWorker({ config: devVars });
const call = worker.fetch;

describe("the MCP SDK client's own OAuth flow against createOAuthWorker", () => {
  it("discovers, registers, authorizes with PKCE, and calls a tool as the signed-in user", async () => {
    const provider = new MemoryOAuthProvider();
    const url = new URL(`${loopbackOrigin}/mcp`);
    const first = new StreamableHTTPClientTransport(url, { authProvider: provider, fetch: call });
    await expect(new Client({ name: "sdk", version: "0" }).connect(first)).rejects.toBeInstanceOf(UnauthorizedError);
    expect(provider.info?.client_id).toBeTruthy();
    const authorizationUrl = provider.authorizationUrl;
    expect(authorizationUrl?.searchParams.get("code_challenge_method")).toBe("S256");
    expect(authorizationUrl?.searchParams.get("resource")).toBe(loopbackOrigin);

    const redirect = await browserSignIn({ fetch: call, helpers: () => worker.helpers(loopbackOrigin) }, authorizationUrl?.toString() ?? "");
    expect(redirect.searchParams.get("iss")).toBe(loopbackOrigin);
    await first.finishAuth(redirect.searchParams);
    expect(provider.stored?.access_token).toBeTruthy();

    const client = new Client({ name: "sdk", version: "0" });
    await client.connect(new StreamableHTTPClientTransport(url, { authProvider: provider, fetch: call }));
    const result = await client.callTool({ name: "whoami", arguments: {} });
    expect(result.content).toEqual([
      { type: "text", text: JSON.stringify({ userId: "dev-alice", login: "alice", email: "alice@example.com", role: "member", idp: "dev" }) },
    ]);
    await client.close();
  });
});
