import { Client, SSEClientTransport, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { SSEClientTransport as SSEClientTransportV1 } from "@modelcontextprotocol/sdk/client/sse.js";
import { StreamableHTTPClientTransport as StreamableHTTPClientTransportV1 } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { z } from "zod";
import type { Progress } from "../harness/mcp-clients";

export type Era = "2025" | "2026";

/**
 * The clients whose abort the cancellation tests prove, and how each one cancels:
 * - `v2-2026`: SDK v2 pinned to 2026-07-28 closes the request's own stream
 * - `v2-2025`, `v1-http`: the 2025 handshake over Streamable HTTP POSTs `notifications/cancelled`
 *   to the endpoint in a new request (the call's stream stays open)
 * - `v1-sse`, `v2-sse`: legacy HTTP+SSE POSTs `notifications/cancelled` to the session's message URL
 */
export type AbortableKind = "v2-2026" | "v2-2025" | "v1-http" | "v1-sse" | "v2-sse";

/**
 * A real MCP client whose tool calls can be abandoned the two ways a real orchestrator does:
 * `abortCall` (the request's AbortSignal, which each SDK turns into its era's cancel) and
 * `disconnect` (the transport closes every open stream, as a client that quits or loses its
 * network does). `requestIds` are the JSON-RPC ids of the tools/call requests it sent.
 */
export interface AbortableClient {
  startCall(name: string, args: Record<string, unknown>, onProgress?: (p: Progress) => void): Promise<unknown>;
  abortCall(): void;
  disconnect(): Promise<void>;
  /** Sends a notification as this client (e.g. a cancel naming another connection's request id). */
  notify(method: string, params: Record<string, unknown>): Promise<void>;
  readonly toolCallIds: ReadonlyArray<string | number>;
}

export interface AbortableOptions {
  headers?: Record<string, string>;
}

const toolCallSchema = z.object({ method: z.literal("tools/call"), id: z.union([z.string(), z.number()]) });

/** A fetch that notes the id of every tools/call it sends (the tests need it to aim a cancel). */
function recordingFetch(ids: Array<string | number>): typeof fetch {
  return async (input, init) => {
    if (typeof init?.body === "string") {
      try {
        const call = toolCallSchema.safeParse(JSON.parse(init.body));
        if (call.success) ids.push(call.data.id);
      } catch {
        // not JSON: nothing to note
      }
    }
    return fetch(input, init);
  };
}

export async function connectAbortable(url: string, kind: AbortableKind | Era, options: AbortableOptions = {}): Promise<AbortableClient> {
  const resolved: AbortableKind = kind === "2026" ? "v2-2026" : kind === "2025" ? "v2-2025" : kind;
  const toolCallIds: Array<string | number> = [];
  const requestInit = { headers: options.headers ?? {} };
  const fetchFn = recordingFetch(toolCallIds);
  const controller = new AbortController();
  const target = new URL(url);
  const signalOptions = { signal: controller.signal, timeout: 60_000 };

  if (resolved === "v1-http" || resolved === "v1-sse") {
    const client = new ClientV1({ name: `slipsnisse-faults-${resolved}`, version: "0.0.0" });
    const transport =
      resolved === "v1-sse"
        ? new SSEClientTransportV1(target, { requestInit, fetch: fetchFn })
        : new StreamableHTTPClientTransportV1(target, { requestInit, fetch: fetchFn });
    await client.connect(transport);
    return {
      startCall: (name, args, onProgress) => {
        const call = client.callTool({ name, arguments: args }, undefined, { ...signalOptions, ...(onProgress ? { onprogress: onProgress } : {}) });
        call.catch(() => undefined);
        return call;
      },
      abortCall: () => controller.abort(new Error("the orchestrator gave up")),
      disconnect: () => client.close(),
      notify: (method, params) => client.notification({ method, params }),
      toolCallIds,
    };
  }

  const client = new Client(
    { name: `slipsnisse-faults-${resolved}`, version: "0.0.0" },
    resolved === "v2-2026" ? { versionNegotiation: { mode: { pin: "2026-07-28" } } } : {},
  );
  const transport =
    resolved === "v2-sse"
      ? new SSEClientTransport(target, { requestInit, fetch: fetchFn })
      : new StreamableHTTPClientTransport(target, { requestInit, fetch: fetchFn });
  await client.connect(transport);
  return {
    startCall: (name, args, onProgress) => {
      const call = client.callTool({ name, arguments: args }, { ...signalOptions, ...(onProgress ? { onprogress: onProgress } : {}) });
      call.catch(() => undefined);
      return call;
    },
    abortCall: () => controller.abort(new Error("the orchestrator gave up")),
    disconnect: () => client.close(),
    notify: (method, params) => client.notification({ method, params } as Parameters<typeof client.notification>[0]),
    toolCallIds,
  };
}
