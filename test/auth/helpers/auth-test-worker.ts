import type { OAuthHelpers } from "@cloudflare/workers-oauth-provider";
import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import type { AuthVars } from "../../../src/auth/auth-config";
import { createOAuthWorker } from "../../../src/auth/create-oauth-worker";
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
export function authTestWorker(config: AuthVars = devVars, upstreamFetch?: UpstreamFetch): TestWorker {
  const worker = createOAuthWorker({
    config,
    upstreamFetch,
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
