import type { ClientCapabilities, ServerContext } from "@modelcontextprotocol/server";
import type { ExpertConfig } from "../catalog/catalog-schema";
import type { ConnectPrompter } from "../experts/session/connection-gate";

/** URL mode (2025-11-25, SEP-1036): the client declared `elicitation: { url: {} }`. */
export function supportsUrlElicitation(capabilities: ClientCapabilities | undefined): boolean {
  const elicitation: unknown = capabilities?.elicitation;
  return typeof elicitation === "object" && elicitation !== null && "url" in elicitation;
}

/** Slipsnisse's origin for connect links: PUBLIC_URL, else the origin this request came to. */
export function originOf(env: Env, ctx: ServerContext, known?: string): { origin?: string } {
  const configured = env.PUBLIC_URL.replace(/\/+$/, "");
  if (configured) return { origin: configured };
  const url = ctx.http?.req?.url;
  if (url !== undefined) return { origin: new URL(url).origin };
  return known === undefined ? {} : { origin: known };
}

/**
 * On a connection that can carry server-to-client requests (legacy SSE): `elicitation/create`
 * in URL mode while the call waits, then `notifications/elicitation/complete` once the session
 * sees the flow finished (SEP-1036). The expert's user_input_timeout_ms bounds the wait.
 */
export function connectPrompter(ctx: ServerContext, expert: ExpertConfig): ConnectPrompter {
  return async (event) => {
    if (event.kind === "complete") {
      await ctx.mcpReq.notify({ method: "notifications/elicitation/complete", params: { elicitationId: event.elicitationId } });
      return "sent";
    }
    const result = await ctx.mcpReq.elicitInput(
      { mode: "url", message: event.message, url: event.url, elicitationId: event.elicitationId },
      { timeout: expert.user_input_timeout_ms + 5_000 },
    );
    return result.action;
  };
}
