import type { JSONRPCMessage, MessageExtraInfo, Transport, TransportSendOptions } from "@modelcontextprotocol/client";

/** How many response ids to remember; ids are a per-client counter, so old ones never recur. */
const REMEMBERED_IDS = 1_024;

/**
 * Wraps a transport and drops repeated inbound messages. Inside workerd the SDK's
 * SSEClientTransport delivers every inbound message twice (measured:
 * docs/platform-notes.md#mcp-clients-inside-workerd), and a
 * second response for the same JSON-RPC id is at best an error and at worst a second progress
 * callback or a duplicated server request. Responses and server requests are deduplicated by
 * id; a notification identical to the one just before it is dropped too.
 */
export class DedupeInboundTransport implements Transport {
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  onmessage?: (<T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void) | undefined;

  private readonly seenIds = new Set<string>();
  private lastNotification: string | undefined;

  constructor(private readonly inner: Transport) {
    inner.onclose = () => this.onclose?.();
    inner.onerror = (error) => this.onerror?.(error);
    inner.onmessage = <T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => {
      if (this.isDuplicate(message)) return;
      this.onmessage?.(message, extra);
    };
  }

  get sessionId(): string | undefined {
    return this.inner.sessionId;
  }

  start(): Promise<void> {
    return this.inner.start();
  }

  send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    return this.inner.send(message, options);
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  setProtocolVersion(version: string): void {
    this.inner.setProtocolVersion?.(version);
  }

  setSupportedProtocolVersions(versions: string[]): void {
    this.inner.setSupportedProtocolVersions?.(versions);
  }

  private isDuplicate(message: JSONRPCMessage): boolean {
    if ("id" in message && message.id !== undefined) {
      // Responses and server->client requests live in different id spaces.
      const key = `${"method" in message ? "request" : "response"}:${String(message.id)}`;
      if (this.seenIds.has(key)) return true;
      this.seenIds.add(key);
      if (this.seenIds.size > REMEMBERED_IDS) {
        const oldest = this.seenIds.values().next().value;
        if (oldest !== undefined) this.seenIds.delete(oldest);
      }
      return false;
    }
    const serialized = JSON.stringify(message);
    const repeated = serialized === this.lastNotification;
    this.lastNotification = serialized;
    return repeated;
  }
}
