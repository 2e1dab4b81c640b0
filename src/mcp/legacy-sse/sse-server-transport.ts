import type { JSONRPCMessage, MessageExtraInfo, Transport } from "@modelcontextprotocol/server";
import type { TaskAnswer } from "../tasks/expert-tasks";
import type { TaskStatusNotification } from "./sse-task-status";

/**
 * The server side of the 2024-11-05 HTTP+SSE transport over one open event stream. SDK v2
 * ships no SSE server transport; this one writes `event: message` frames to the stream the
 * client opened with GET and receives the client's POSTed messages through `deliver`.
 */
export class SseServerTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void;
  private readonly encoder = new TextEncoder();
  private closed = false;
  /** Events carry ids (`<sessionId>:<n>`): a client that sends `Last-Event-ID` back names this stream (sse-hand-over.ts). */
  private eventCount = 0;

  constructor(
    private readonly writer: WritableStreamDefaultWriter<Uint8Array>,
    readonly sessionId: string,
  ) {}

  async start(): Promise<void> {}

  async send(message: JSONRPCMessage): Promise<void> {
    await this.write(`${this.nextId()}event: message\ndata: ${JSON.stringify(message)}\n\n`);
  }

  /** A message built outside the SDK's server (2025-11-25 Tasks: expert-tasks.ts, sse-task-status.ts). */
  async sendOwn(response: TaskAnswer | TaskStatusNotification): Promise<void> {
    await this.write(`${this.nextId()}event: message\ndata: ${JSON.stringify(response)}\n\n`);
  }

  /** First frame of the stream (2024-11-05 spec): where the client must POST its messages. */
  async announceEndpoint(endpoint: string): Promise<void> {
    await this.write(`${this.nextId()}event: endpoint\ndata: ${endpoint}\n\n`);
  }

  /** Comment frames keep proxies from timing the stream out and reveal a vanished client. */
  async keepAlive(): Promise<void> {
    await this.write(`: keep-alive\n\n`);
  }

  deliver(message: JSONRPCMessage): void {
    this.onmessage?.(message);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.writer.close().catch(() => undefined);
    this.onclose?.();
  }

  get isClosed(): boolean {
    return this.closed;
  }

  private nextId(): string {
    return `id: ${this.sessionId}:${this.eventCount++}\n`;
  }

  private async write(frame: string): Promise<void> {
    if (this.closed) return;
    try {
      await this.writer.write(this.encoder.encode(frame));
    } catch (error) {
      // The client went away: the stream is done.
      await this.close();
      this.onerror?.(error instanceof Error ? error : new Error(String(error)));
    }
  }
}
