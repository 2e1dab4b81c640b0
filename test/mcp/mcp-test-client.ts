import { createExecutionContext, env, SELF, waitOnExecutionContext } from "cloudflare:test";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { createApp } from "../../src/app";
import type { UserProps } from "../../src/auth/user-props";
import { contextWithProps } from "../../src/execution-context";

export type Era = "2025" | "2026";

/** Requests through a service binding carry no Host header, which createMcpHandler requires. */
export function selfFetch(input: string | URL | Request, init?: RequestInit): Promise<Response> {
  const request = new Request(input, init);
  const headers = new Headers(request.headers);
  headers.set("host", new URL(request.url).host);
  return SELF.fetch(new Request(request, { headers }));
}

/** A real MCP SDK v2 client over HTTP to the Worker: the 2025 handshake or 2026-07-28 discover. */
export async function connectClient(path: string, era: Era): Promise<Client> {
  const client = new Client({ name: "slipsnisse-test", version: "0.0.0" }, era === "2026" ? { versionNegotiation: { mode: { pin: "2026-07-28" } } } : {});
  await client.connect(new StreamableHTTPClientTransport(new URL(`http://localhost${path}`), { fetch: selfFetch }));
  return client;
}

/** The app as the auth layer hands it a request: the signed-in user in ctx.props. */
export async function appFetchAs(user: UserProps, input: string | URL | Request, init?: RequestInit): Promise<Response> {
  const request = new Request(input, init);
  const headers = new Headers(request.headers);
  headers.set("host", new URL(request.url).host);
  const ctx = createExecutionContext();
  const response = await createApp().fetch(new Request(request, { headers }), env, contextWithProps(ctx, user));
  await waitOnExecutionContext(ctx);
  return response;
}
