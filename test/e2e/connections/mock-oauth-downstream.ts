import type { IncomingMessage, ServerResponse } from "node:http";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { createPublicKey, verify, type JsonWebKey } from "node:crypto";
import { OAuth2Server } from "oauth2-mock-server";
import { z } from "zod";
import { readJsonBody } from "../../fixtures/fixture-stats";
import { listenOnLoopback, type LoopbackServer } from "../../fixtures/loopback-http";
import { serveStatelessRequest } from "../../fixtures/stateless-mcp-request";

export interface MockOAuthDownstream {
  /** An MCP server whose authorization server offers `client_credentials`. */
  mcpUrl: string;
  /**
   * The same authorization server's accounts, each signed in through the authorization-code
   * grant: the n-th access token issued is account `acct<n>`, and this server lists `mailbox` and
   * `only_acct<n>` to it (a server that shows each account its own tools).
   */
  accountsMcpUrl: string;
  /** The same MCP server behind an authorization server whose metadata does not list the grant. */
  noGrantMcpUrl: string;
  /** Basic credentials each authorization server's token endpoint received, decoded (`id:secret`). */
  tokenRequests(): { offered: string[]; notOffered: string[] };
  /** Every access token the MCP server accepted. */
  acceptedTokens(): string[];
  stop(): Promise<void>;
}

interface Issuer {
  server: OAuth2Server;
  url: string;
  requests: string[];
}

/** The account an authorization-code token is for: its `sub`, set per token in startIssuer. */
const ACCOUNT_CLAIM = "sub";

/** oauth2-mock-server on loopback, its metadata naming client_secret_basic; `grants` overrides grant_types_supported. */
async function startIssuer(grants?: string[]): Promise<Issuer> {
  const server = new OAuth2Server();
  await server.issuer.keys.generate("RS256");
  await server.start(0, "127.0.0.1");
  const url = (server.issuer.url ?? "").replace(/\/+$/, "");
  const requests: string[] = [];
  server.service.on("beforeWellKnownOpenIdConfiguration", (response: { body: Record<string, unknown> }) => {
    response.body.token_endpoint_auth_methods_supported = ["client_secret_basic"];
    if (grants !== undefined) response.body.grant_types_supported = grants;
  });
  let accounts = 0;
  server.service.on("beforeTokenSigning", (token: { payload: Record<string, unknown> }, req: IncomingMessage & { body?: Record<string, unknown> }) => {
    // An id token (it names its audience) is not what an MCP server is sent: only access tokens count.
    if (token.payload.aud !== undefined) return;
    const basic = /^Basic (.+)$/.exec(req.headers.authorization ?? "")?.[1];
    const decoded = basic === undefined ? "" : Buffer.from(basic, "base64").toString("utf8");
    requests.push(decoded);
    // The client the token was issued to, as a real authorization server records it.
    token.payload.client_id = decodeURIComponent(decoded.split(":")[0] ?? "");
    // Each browser sign-in is another account (this server's /authorize asks nobody who they are).
    if (req.body?.grant_type === "authorization_code") {
      accounts += 1;
      token.payload[ACCOUNT_CLAIM] = `acct${accounts}`;
    }
  });
  return { server, url, requests };
}

/**
 * A real MCP SDK server (tool `whoami`: the client id its token was issued to) whose tokens come
 * from oauth2-mock-server, a real OAuth 2 server on loopback that implements the client-credentials
 * and authorization-code (PKCE) grants; its /authorize approves at once. The MCP server serves protected-resource metadata (RFC 9728) naming its authorization
 * server and checks every bearer token's signature against that server's keys; without a valid
 * one it answers 401 with a Bearer challenge. `/mcp-nogrant` is the same behind a second
 * authorization server whose metadata lists no `client_credentials`.
 */
export async function startMockOAuthDownstream(): Promise<MockOAuthDownstream> {
  const [offered, notOffered] = await Promise.all([startIssuer(), startIssuer(["authorization_code"])]);
  const accepted: string[] = [];
  let resource: LoopbackServer | undefined;
  const issuerFor = (path: string) => (path.startsWith("/mcp-nogrant") || path.endsWith("/mcp-nogrant") ? notOffered : offered);
  resource = await listenOnLoopback(async (req: IncomingMessage, res: ServerResponse) => {
    const origin = resource?.origin ?? "";
    const path = new URL(req.url ?? "/", "http://x").pathname;
    if (path.startsWith("/.well-known/oauth-protected-resource")) {
      const mcpPath = path.slice("/.well-known/oauth-protected-resource".length) || "/mcp";
      res
        .writeHead(200, { "content-type": "application/json" })
        .end(JSON.stringify({ resource: `${origin}${mcpPath}`, authorization_servers: [issuerFor(mcpPath).url], bearer_methods_supported: ["header"] }));
      return;
    }
    if (path !== "/mcp" && path !== "/mcp-nogrant" && path !== "/mcp-accounts") {
      res.writeHead(404).end("not found");
      return;
    }
    const challenge = `Bearer resource_metadata="${origin}/.well-known/oauth-protected-resource${path}"`;
    const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1];
    const issuer = issuerFor(path);
    const verified = token === undefined ? undefined : verifyJwt(token, issuer);
    if (verified === undefined || token === undefined) {
      res.writeHead(401, { "www-authenticate": challenge }).end("sign in first");
      return;
    }
    if (!accepted.includes(token)) accepted.push(token);
    if (req.method !== "POST") {
      res.writeHead(405, { allow: "POST" }).end();
      return;
    }
    const body = await readJsonBody(req);
    const server = new McpServer({ name: "client-credentials", version: "1.0.0" });
    const clientId = String(verified.client_id ?? "unknown");
    if (path === "/mcp-accounts") {
      const account = String(verified[ACCOUNT_CLAIM] ?? "nobody").replace(/[^a-z0-9]/gi, "");
      server.registerTool("mailbox", { description: "Your mailbox.", inputSchema: { folder: z.string().optional() } }, async () => ({
        content: [{ type: "text", text: `mailbox of ${account}` }],
      }));
      server.registerTool(`only_${account}`, { description: "A tool only this account has.", inputSchema: {} }, async () => ({
        content: [{ type: "text", text: account }],
      }));
    } else {
      server.registerTool("whoami", { description: "The OAuth client this call is made as.", inputSchema: { note: z.string().optional() } }, async () => ({
        content: [{ type: "text", text: `client ${clientId}` }],
      }));
    }
    await serveStatelessRequest(server, req, res, body);
  });
  const { origin } = resource;
  return {
    mcpUrl: `${origin}/mcp`,
    noGrantMcpUrl: `${origin}/mcp-nogrant`,
    accountsMcpUrl: `${origin}/mcp-accounts`,
    tokenRequests: () => ({ offered: [...offered.requests], notOffered: [...notOffered.requests] }),
    acceptedTokens: () => [...accepted],
    stop: async () => {
      await Promise.allSettled([resource?.stop(), offered.server.stop(), notOffered.server.stop()]);
    },
  };
}

/** The claims of an RS256 JWT signed by one of `issuer`'s keys, issued by it and not expired; else undefined. */
function verifyJwt(token: string, issuer: Issuer): Record<string, unknown> | undefined {
  const [head, body, signature] = token.split(".");
  if (head === undefined || body === undefined || signature === undefined) return undefined;
  const decode = (part: string): Record<string, unknown> => JSON.parse(Buffer.from(part, "base64url").toString("utf8")) as Record<string, unknown>;
  try {
    const header = decode(head);
    const keys = issuer.server.issuer.keys.toJSON() as Array<JsonWebKey & { kid?: string }>;
    const jwk = keys.find((key) => key.kid === header.kid);
    if (header.alg !== "RS256" || jwk === undefined) return undefined;
    if (!verify("RSA-SHA256", Buffer.from(`${head}.${body}`), createPublicKey({ key: jwk, format: "jwk" }), Buffer.from(signature, "base64url")))
      return undefined;
    const claims = decode(body);
    if (claims.iss !== issuer.url || typeof claims.exp !== "number" || claims.exp * 1000 < Date.now()) return undefined;
    return claims;
  } catch {
    return undefined;
  }
}
