import { Client, SSEClientTransport, StreamableHTTPClientTransport, type Transport } from "@modelcontextprotocol/client";
import type { DownstreamServerConfig } from "../catalog/catalog-schema";
import { SlipsnisseError } from "../errors";
import { DownstreamUnavailableError } from "./downstream-errors";
import { downstreamFetch, downstreamUrl } from "./downstream-fetch";
import { CancelClosesStreamTransport } from "./cancel-closes-stream-transport";
import { capDownstreamFetch } from "./downstream-response-cap";
import { DedupeInboundTransport } from "./dedupe-inbound-transport";
import { redactSecretValues, resolveSecretHeaders } from "./secret-headers";
import { fetchWithTraceparent } from "./trace-context";
import { describeFailure, isStreamableHttpRejection } from "./transport-failure";
import { assertSafeDownstreamUrl } from "./url-guard";
import { ConnectionRequiredError } from "./connections/connection-errors";
import { connectedFetch, type TokenSource } from "./connections/token-source";
import { catalogClientSecretForms } from "./connections/client-secret-forms";

export type WireTransport = "streamable-http" | "sse";

/** A connected MCP client to one downstream server. Holds resolved secrets in memory only. */
export interface DownstreamConnection {
  readonly client: Client;
  readonly transport: WireTransport | "binding";
  readonly protocolVersion: string | undefined;
  /** The Streamable HTTP session the server minted, if it keeps sessions. */
  sessionId(): string | undefined;
  /** Scrub this connection's secret values out of text that came from the server. */
  redact(text: string): string;
  close(): Promise<void>;
}

const CLIENT_INFO = { name: "slipsnisse", version: "0.1.0" };

/**
 * Connect to one downstream server: resolve its `${SECRET}` headers, pick the transport
 * (`auto` tries Streamable HTTP and falls back to legacy SSE when the URL rejects it), and
 * negotiate the protocol era (`server/discover` first, `initialize` as the fallback). The
 * whole connect, fallback included, is bounded by connect_timeout_ms.
 * Throws DownstreamUnavailableError naming the server.
 */
export async function connectDownstream(serverId: string, config: DownstreamServerConfig, env: Env, tokens?: TokenSource): Promise<DownstreamConnection> {
  let secretValues: readonly string[] = [];
  const redact = (text: string) => redactSecretValues(text, secretValues);
  try {
    // Only the configured headers go downstream: the inbound request's Authorization never
    // reaches this layer (docs/architecture.md#no-token-passthrough).
    const resolved = resolveSecretHeaders(serverId, config.headers, env);
    // A pre-registered OAuth client's secret never goes to the server, but a server that knows it
    // (the same party as its authorization server) could still echo it: scrubbed in every form.
    secretValues = [...resolved.secretValues, ...catalogClientSecretForms(env, config.auth)];
    // Every request carries the trace of the run that made it (trace-context.ts).
    const plain = downstreamFetch(serverId, config, env);
    // A server with `auth` gets the caller's own token (connections/), learned for redaction too.
    const learn = (token: string) => {
      if (!secretValues.includes(token)) secretValues = [...secretValues, token];
    };
    if (config.auth !== undefined && tokens === undefined)
      throw new DownstreamUnavailableError(serverId, "it signs each user in (auth) and this call has no user connection");
    const signed = config.auth !== undefined && tokens !== undefined ? connectedFetch(serverId, config.auth.connection, plain, tokens, learn) : plain;
    // Every response is counted as it streams and cut past max_response_bytes (response-byte-cap.ts).
    const fetch = capDownstreamFetch(serverId, config.max_response_bytes, fetchWithTraceparent(signed));
    // A service binding never leaves Cloudflare's network; its URL only names the path and Host.
    const url = config.binding === undefined && config.url !== undefined ? assertSafeDownstreamUrl(serverId, config.url, env) : downstreamUrl(config);
    const deadline = AbortSignal.timeout(config.connect_timeout_ms);
    const order: WireTransport[] = config.transport === "auto" ? ["streamable-http", "sse"] : [config.transport];
    for (const [index, kind] of order.entries()) {
      const transport =
        kind === "sse"
          ? new DedupeInboundTransport(new SSEClientTransport(url, { requestInit: { headers: resolved.headers }, fetch }))
          : new CancelClosesStreamTransport(new StreamableHTTPClientTransport(url, { requestInit: { headers: resolved.headers }, fetch }));
      try {
        const client = await connectWithin(transport, deadline, config.connect_timeout_ms);
        return {
          client,
          transport: config.binding === undefined ? kind : "binding",
          protocolVersion: client.getNegotiatedProtocolVersion(),
          sessionId: () => transport.sessionId,
          redact,
          close: () => client.close().catch(() => undefined),
        };
      } catch (error) {
        const more = index < order.length - 1;
        if (!(more && isStreamableHttpRejection(error))) throw error;
      }
    }
    throw new Error("no transport left to try");
  } catch (error) {
    if (error instanceof DownstreamUnavailableError) throw error;
    const needsConnection = connectionRequired(error);
    if (needsConnection) throw needsConnection;
    if (error instanceof SlipsnisseError) throw new DownstreamUnavailableError(serverId, error.message, error);
    throw new DownstreamUnavailableError(serverId, redact(describeFailure(error)));
  }
}

/**
 * `client.connect` bounds the handshake requests with `timeout`, but not opening an SSE stream
 * that never answers; the race closes the client then, which aborts the stream.
 */
async function connectWithin(transport: Transport, deadline: AbortSignal, timeoutMs: number): Promise<Client> {
  const client = new Client(CLIENT_INFO, { versionNegotiation: { mode: "auto" } });
  if (deadline.aborted) throw new Error(`connect timed out after ${timeoutMs} ms`);
  let onAbort: (() => void) | undefined;
  const timedOut = new Promise<never>((_resolve, reject) => {
    onAbort = () => reject(new Error(`connect timed out after ${timeoutMs} ms`));
    deadline.addEventListener("abort", onAbort, { once: true });
  });
  try {
    await Promise.race([client.connect(transport, { timeout: timeoutMs, signal: deadline }), timedOut]);
    return client;
  } catch (error) {
    await client.close().catch(() => undefined);
    throw error;
  } finally {
    if (onAbort !== undefined) deadline.removeEventListener("abort", onAbort);
  }
}

/** The ConnectionRequiredError a transport may have wrapped (as `cause`), if this failure is one. */
export function connectionRequired(error: unknown): ConnectionRequiredError | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current instanceof Error; depth++) {
    if (current instanceof ConnectionRequiredError) return current;
    current = current.cause;
  }
  return undefined;
}
