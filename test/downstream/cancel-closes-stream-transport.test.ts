import { ProtocolError, type JSONRPCMessage, type Transport, type TransportSendOptions } from "@modelcontextprotocol/client";
import { describe, expect, it } from "vitest";
import { CancelClosesStreamTransport, isStreamEndedError } from "../../src/downstream/cancel-closes-stream-transport";

/** An inner transport that records what it was asked to send and lets the test end streams. */
class RecordingTransport implements Transport {
  onmessage?: (message: JSONRPCMessage) => void;
  readonly sent: Array<{ message: JSONRPCMessage; options?: TransportSendOptions }> = [];
  async start(): Promise<void> {}
  async close(): Promise<void> {}
  async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    this.sent.push({ message, ...(options ? { options } : {}) });
  }
  endStreamOf(index: number): void {
    this.sent[index]?.options?.onRequestStreamEnd?.();
  }
}

function wrapped() {
  const inner = new RecordingTransport();
  const outer = new CancelClosesStreamTransport(inner);
  const received: JSONRPCMessage[] = [];
  outer.onmessage = (message) => void received.push(message);
  return { inner, outer, received };
}

const call = (id: number): JSONRPCMessage => ({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "sleep" } });

describe("CancelClosesStreamTransport", () => {
  it("fails a request whose response stream ended unanswered, with an error the pool recognises", async () => {
    const { inner, outer, received } = wrapped();
    await outer.send(call(7));
    inner.endStreamOf(0);
    expect(received).toHaveLength(1);
    const answer = received[0] as { id: number; error: { code: number; message: string; data: unknown } };
    expect(answer.id).toBe(7);
    const error = new ProtocolError(answer.error.code, answer.error.message, answer.error.data);
    expect(isStreamEndedError(error)).toBe(true);
    expect(isStreamEndedError(new ProtocolError(-32000, "other", { reason: "else" }))).toBe(false);
  });

  it("leaves an answered request alone when its stream then ends", async () => {
    const { inner, outer, received } = wrapped();
    await outer.send(call(8));
    inner.onmessage?.({ jsonrpc: "2.0", id: 8, result: { content: [] } });
    inner.endStreamOf(0);
    expect(received).toEqual([{ jsonrpc: "2.0", id: 8, result: { content: [] } }]);
  });

  it("closes the request's own stream when the request is cancelled, and still sends the notification", async () => {
    const { inner, outer, received } = wrapped();
    await outer.send(call(9));
    const signal = inner.sent[0]?.options?.requestSignal;
    expect(signal?.aborted).toBe(false);
    await outer.send({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 9 } });
    expect(signal?.aborted).toBe(true);
    expect(inner.sent[1]?.message).toMatchObject({ method: "notifications/cancelled" });
    // A cancelled request is not reported again when its stream ends.
    inner.endStreamOf(0);
    expect(received).toEqual([]);
  });
});
