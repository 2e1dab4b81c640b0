import type { DownstreamServerConfig } from "../../catalog/catalog-schema";
import { downstreamFetch, downstreamUrl } from "../downstream-fetch";
import { assertSafeDownstreamUrl } from "../url-guard";
import { SlipsnisseError } from "../../errors";

/** What a server with `auth` answered a request that carried no credentials. */
export type SignInProbe =
  /** 401 with a Bearer challenge: up, and asking for a sign-in, as the MCP authorization spec says it should. */
  | { reachable: true; asksSignIn: true }
  /** It answered without asking for a sign-in (some servers serve `initialize` to anyone). */
  | { reachable: true; asksSignIn: false; status: number }
  /** Down, or answered in a way no client can sign in with; `reason` is a sentence naming which. */
  | { reachable: false; reason: string };

/**
 * Whether a server that signs each caller in is up, without anyone's token: one `initialize`
 * POST (a GET for a legacy SSE endpoint) with no Authorization, through the same guarded fetch
 * and URL guard as every downstream request, bounded by the server's connect_timeout_ms. A 401
 * with `WWW-Authenticate: Bearer` is the healthy answer of such a server. Nothing is sent that
 * belongs to a member or the team, and the body is not read.
 */
export async function probeSignIn(serverId: string, config: DownstreamServerConfig, env: Env): Promise<SignInProbe> {
  try {
    const fetch = downstreamFetch(serverId, config, env);
    const url = config.binding === undefined && config.url !== undefined ? assertSafeDownstreamUrl(serverId, config.url, env) : downstreamUrl(config);
    const signal = AbortSignal.timeout(config.connect_timeout_ms);
    const sse = config.transport === "sse";
    const response = await fetch(
      url.href,
      sse
        ? { method: "GET", headers: { accept: "text/event-stream" }, signal }
        : {
            method: "POST",
            headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
            body: JSON.stringify({
              jsonrpc: "2.0",
              id: 0,
              method: "initialize",
              params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "slipsnisse-health", version: "0.1.0" } },
            }),
            signal,
          },
    );
    await response.body?.cancel().catch(() => undefined);
    if (response.status === 401 && /^\s*bearer\b/i.test(response.headers.get("www-authenticate") ?? "")) return { reachable: true, asksSignIn: true };
    if (response.status === 401)
      return { reachable: false, reason: "it answered 401 without a Bearer challenge (WWW-Authenticate), so no client can learn how to sign in" };
    if (response.ok) return { reachable: true, asksSignIn: false, status: response.status };
    return { reachable: false, reason: `it answered HTTP ${response.status} to a request without credentials` };
  } catch (error) {
    const timedOut = error instanceof Error && (error.name === "TimeoutError" || error.name === "AbortError");
    const why = timedOut ? `no answer within ${config.connect_timeout_ms} ms` : SlipsnisseError.is(error) ? error.message : String(error);
    return { reachable: false, reason: `it is not reachable: ${why.slice(0, 300)}` };
  }
}
