import { contextWithProps } from "../execution-context";
import { userPropsSchema, type UserProps, vouchFor } from "./user-props";

/** What the lead's MCP/admin handler implements: `ctx.props` is the signed-in user. */
export interface AuthenticatedApiHandler {
  fetch(request: Request, env: Env, ctx: ExecutionContext<UserProps>): Response | Promise<Response>;
}

/**
 * Wraps the API handler so the inbound token goes no further
 * (docs/architecture.md#no-token-passthrough): the
 * `Authorization` header is removed from the request, and the handler gets a fresh context
 * whose `props` are exactly the validated UserProps, without the provider's `ctx.auth`, which
 * carries the raw token. Props that do not parse (a grant from an older schema) are refused
 * with the same challenge as a bad token, so the client signs in again.
 */
export function guardApiHandler(inner: AuthenticatedApiHandler, resourceMetadataUrl: (request: Request) => string) {
  return {
    async fetch(request: Request, env: Env, ctx: ExecutionContext): Promise<Response> {
      const props = userPropsSchema.safeParse(ctx.props);
      if (!props.success) {
        return new Response(JSON.stringify({ error: "invalid_token", error_description: "The token's identity is unreadable; sign in again." }), {
          status: 401,
          headers: {
            "Content-Type": "application/json",
            "WWW-Authenticate": `Bearer error="invalid_token", resource_metadata="${resourceMetadataUrl(request)}"`,
          },
        });
      }
      return inner.fetch(withoutCredentials(request), env, contextWithProps(ctx, vouchFor(props.data)));
    },
  };
}

export function withoutCredentials(request: Request): Request {
  const headers = new Headers(request.headers);
  headers.delete("Authorization");
  return new Request(request, { headers });
}
