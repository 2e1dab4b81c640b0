import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import type { Progress } from "../harness/mcp-clients";

export type Era = "2025" | "2026";

/**
 * An SDK v2 client whose tool calls can be abandoned the two ways a real orchestrator does:
 * `abortCall` (the request's AbortSignal: 2026-07-28 closes the request's stream, the 2025
 * handshake POSTs `notifications/cancelled`) and `disconnect` (the transport closes every
 * open stream, as a client that quits or loses its network does).
 */
export interface AbortableClient {
  startCall(name: string, args: Record<string, unknown>, onProgress?: (p: Progress) => void): Promise<unknown>;
  abortCall(): void;
  disconnect(): Promise<void>;
}

export async function connectAbortable(url: string, era: Era): Promise<AbortableClient> {
  const client = new Client({ name: `slipsnisse-faults-${era}`, version: "0.0.0" }, era === "2026" ? { versionNegotiation: { mode: { pin: "2026-07-28" } } } : {});
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  const controller = new AbortController();
  return {
    startCall: (name, args, onProgress) => {
      const call = client.callTool({ name, arguments: args }, { signal: controller.signal, timeout: 60_000, ...(onProgress ? { onprogress: onProgress } : {}) });
      call.catch(() => undefined);
      return call;
    },
    abortCall: () => controller.abort(new Error("the orchestrator gave up")),
    disconnect: () => client.close(),
  };
}
