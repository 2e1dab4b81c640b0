import { Client, SSEClientTransport, type JSONRPCMessage, type Transport } from "@modelcontextprotocol/client";
import { describe, expect, it } from "vitest";
import { DedupeInboundTransport } from "../../src/downstream/dedupe-inbound-transport";
import { sseBase } from "./downstream-test-helpers";

/** Records what a transport hands to its consumer, then passes it on. */
function tap(transport: Transport, into: JSONRPCMessage[]): void {
  const start = transport.start.bind(transport);
  transport.start = async () => {
    const handler = transport.onmessage;
    transport.onmessage = (message, extra) => {
      into.push(message);
      handler?.(message, extra);
    };
    return start();
  };
}

const responseIds = (messages: JSONRPCMessage[]) => messages.flatMap((m) => ("id" in m && !("method" in m) ? [m.id] : []));

describe("DedupeInboundTransport", () => {
  it("hands each SSE response to the client once, though workerd's SSE delivers it twice", async () => {
    const url = new URL(`${sseBase("dedupe")}/sse`);
    const raw: JSONRPCMessage[] = [];
    const inner = new SSEClientTransport(url);
    const wrapped = new DedupeInboundTransport(inner);
    const delivered: JSONRPCMessage[] = [];
    tap(wrapped, delivered);
    // Observe the inner transport too: the wrapper installs its handler in its constructor.
    const wrapperHandler = inner.onmessage;
    inner.onmessage = (message: JSONRPCMessage) => {
      raw.push(message);
      wrapperHandler?.(message);
    };

    const client = new Client({ name: "t", version: "0" });
    await client.connect(wrapped);
    await client.listTools();
    await client.callTool({ name: "echo", arguments: { text: "once" } });
    await client.close();

    const ids = responseIds(delivered);
    expect(ids).toEqual([...new Set(ids)]);
    expect(ids.length).toBe(3);
    expect(responseIds(raw).length).toBeGreaterThanOrEqual(ids.length);
  });

  it("drops a repeated response id and a back-to-back identical notification, keeps the rest", async () => {
    const sent: JSONRPCMessage[] = [];
    const inner: Transport = {
      start: async () => undefined,
      send: async (message) => void sent.push(message),
      close: async () => undefined,
    };
    const wrapped = new DedupeInboundTransport(inner);
    const got: JSONRPCMessage[] = [];
    wrapped.onmessage = (message) => void got.push(message);
    const response: JSONRPCMessage = { jsonrpc: "2.0", id: 7, result: {} };
    const progress: JSONRPCMessage = { jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: 1, progress: 1 } };
    const progress2: JSONRPCMessage = { jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: 1, progress: 2 } };
    const serverRequest: JSONRPCMessage = { jsonrpc: "2.0", id: 7, method: "ping" };
    for (const message of [response, response, progress, progress, progress2, serverRequest, serverRequest]) {
      inner.onmessage?.(message);
    }
    expect(got).toEqual([response, progress, progress2, serverRequest]);
  });
});
