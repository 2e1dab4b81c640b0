import { ClientReplyTimeoutError } from "./protocol-errors";

/** What a client answered to a request the server sent it: the JSON-RPC `result`, or its `error`. */
export type ClientReply = { result: Record<string, unknown> } | { error: { code: number; message: string } };

const MAX_WAITING = 100;
const EARLY_REPLY_MS = 30_000;

/**
 * Replies to server-to-client requests (elicitation/create, and later URL-mode elicitation) sent
 * on a stateless 2025 Streamable HTTP call's stream. The client POSTs its reply as a new request,
 * which reaches another Worker invocation and, through the user's own session, this object: the
 * request id the MCP surface minted finds the waiting run here, the way a 2025 cancel finds it
 * by request id. Another user's reply reaches another session and finds nothing.
 */
export class ClientReplies {
  private readonly waiting = new Map<string, (reply: ClientReply) => void>();
  /**
   * Replies that came before their wait: the request goes out on the stream before the wait
   * reaches this object (another RPC), and a quick client can answer in between. Kept briefly.
   */
  private readonly early = new Map<string, { reply: ClientReply; until: number }>();

  /** Resolves with the client's reply to request `id`, or fails after `timeoutMs`. */
  wait(id: string, timeoutMs: number): Promise<ClientReply> {
    const early = this.early.get(id);
    if (early) {
      this.early.delete(id);
      return Promise.resolve(early.reply);
    }
    if (this.waiting.size >= MAX_WAITING) return Promise.reject(new ClientReplyTimeoutError(id, 0));
    return new Promise<ClientReply>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting.delete(id);
        reject(new ClientReplyTimeoutError(id, timeoutMs));
      }, timeoutMs);
      this.waiting.set(id, (reply) => {
        clearTimeout(timer);
        this.waiting.delete(id);
        resolve(reply);
      });
    });
  }

  /** False when nothing here waits for `id` yet (kept a little while for a wait still on its way). */
  deliver(id: string, reply: ClientReply, now = Date.now()): boolean {
    const resolve = this.waiting.get(id);
    if (resolve) {
      resolve(reply);
      return true;
    }
    for (const [key, entry] of this.early) if (entry.until <= now) this.early.delete(key);
    if (this.early.size < MAX_WAITING) this.early.set(id, { reply, until: now + EARLY_REPLY_MS });
    return false;
  }
}
