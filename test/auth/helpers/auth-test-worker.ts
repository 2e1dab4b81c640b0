import type { OAuthHelpers } from "@cloudflare/workers-oauth-provider";
import { McpServer } from "@modelcontextprotocol/server";
import { createMcpHandler, getMcpAuthContext } from "agents/mcp/server";
import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import type { AuthVars } from "../../../src/auth/auth-config";
import { createOAuthWorker, type CreateOAuthWorkerOptions } from "../../../src/auth/create-oauth-worker";
import type { UpstreamFetch } from "../../../src/auth/identity/identity-provider";

export const loopbackOrigin = "http://127.0.0.1:8787";
export const claudeCallback = "https://claude.ai/api/mcp/auth_callback";

/** What the echo API handler saw, so tests can prove what reached it and what did not. */
export interface EchoSeen {
  props: unknown;
  authorization: string | null;
  contextHasAuth: boolean;
  url: string;
  /** Bindings still reachable through the env the handler got (the provider's env is a copy). */
  bindings: string[];
}

export const devVars: AuthVars = { IDP: "dev", DEV_USER: "alice", DEV_EMAIL: "alice@example.com", ENVIRONMENT: "test", ADMIN_USERS: "root" };

export interface TestWorker {
  fetch(input: string, init?: RequestInit): Promise<Response>;
  helpers(origin: string): OAuthHelpers;
}

/** A Worker built from createOAuthWorker with an echo API handler, called in-process. */
export function authTestWorker(
  config: AuthVars = devVars,
  upstreamFetch?: UpstreamFetch,
  clientMetadataFetch?: CreateOAuthWorkerOptions["clientMetadataFetch"],
): TestWorker {
  const worker = createOAuthWorker({
    config,
    upstreamFetch,
    ...(clientMetadataFetch === undefined ? {} : { clientMetadataFetch }),
    apiHandler: {
      fetch(request, handlerEnv, ctx) {
        const seen: EchoSeen = {
          props: ctx.props,
          authorization: request.headers.get("Authorization"),
          contextHasAuth: "auth" in ctx,
          url: request.url,
          bindings: ["DB", "CACHE", "OAUTH_KV", "EXPERT_SESSION"].filter((name) => Reflect.get(handlerEnv, name) !== undefined),
        };
        return Response.json(seen);
      },
    },
    defaultHandler: { fetch: () => new Response("default handler") },
  });
  return {
    async fetch(input, init) {
      const ctx = createExecutionContext();
      const response = await worker.fetch(new Request(input, { redirect: "manual", ...init }), env, ctx);
      await waitOnExecutionContext(ctx);
      return response;
    },
    helpers: (origin) => worker.helpers(env, origin),
  };
}

/**
 * A Worker from createOAuthWorker whose API is one MCP tool, `whoami`, answering what the signed-in
 * user's props say (`text`; JSON of the props by default). Its fetch calls it in-process as a
 * client over the network would: with the request's Host header. `onRequest` sees each request.
 */
export function mcpWhoamiWorker(
  options: Omit<CreateOAuthWorkerOptions, "apiHandler">,
  { text = (props: unknown) => JSON.stringify(props ?? null), onRequest }: { text?: (props: unknown) => string; onRequest?: (request: Request) => void } = {},
): { fetch: (input: RequestInfo | URL, init?: RequestInit) => Promise<Response>; helpers: (origin: string) => OAuthHelpers } {
  const mcp = createMcpHandler(
    () => {
      const server = new McpServer({ name: "auth-test", version: "0.0.0" });
      server.registerTool("whoami", { description: "The signed-in user" }, async () => ({
        content: [{ type: "text", text: text(getMcpAuthContext()?.props) }],
      }));
      return server;
    },
    { route: "/mcp" },
  );
  const worker = createOAuthWorker({ ...options, apiHandler: { fetch: (request, handlerEnv, ctx) => mcp(request, handlerEnv, ctx) } });
  return {
    async fetch(input, init) {
      const request = new Request(input, { redirect: "manual", ...init });
      onRequest?.(request);
      const headers = new Headers(request.headers);
      headers.set("Host", new URL(request.url).host);
      const ctx = createExecutionContext();
      const response = await worker.fetch(new Request(request, { headers }), env, ctx);
      await waitOnExecutionContext(ctx);
      return response;
    },
    helpers: (origin) => worker.helpers(env, origin),
  };
}
