import { type ClientCapabilities, type ServerContext, UrlElicitationRequiredError } from "@modelcontextprotocol/server";
import type { ConnectRequest } from "../experts/session/connection-gate";

/** URL mode (2025-11-25, SEP-1036): the client declared `elicitation: { url: {} }`. */
export function supportsUrlElicitation(capabilities: ClientCapabilities | undefined): boolean {
  const elicitation: unknown = capabilities?.elicitation;
  return typeof elicitation === "object" && elicitation !== null && "url" in elicitation;
}

/** The -32042 error carrying the connect page, for a client that can open URLs for its user. */
export function urlElicitationRequired(connect: ConnectRequest, message: string): UrlElicitationRequiredError {
  return new UrlElicitationRequiredError([{ mode: "url", message, url: connect.url, elicitationId: connect.elicitationId }], message);
}

/** Slipsnisse's origin for connect links: PUBLIC_URL, else the origin this request came to. */
export function originOf(env: Env, ctx: ServerContext, known?: string): { origin?: string } {
  const configured = env.PUBLIC_URL.replace(/\/+$/, "");
  if (configured) return { origin: configured };
  const url = ctx.http?.req?.url;
  if (url !== undefined) return { origin: new URL(url).origin };
  return known === undefined ? {} : { origin: known };
}
