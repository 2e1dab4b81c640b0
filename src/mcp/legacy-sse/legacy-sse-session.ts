import { DurableObject } from "cloudflare:workers";
import { type JSONRPCMessage, parseJSONRPCMessage } from "@modelcontextprotocol/server";
import type { UserProps } from "../../auth/user-props";
import type { McpServer } from "@modelcontextprotocol/server";
import { type CompiledSkill, loadSkill } from "../../catalog/compiled-skill-cache";
import { cachedListings } from "../../experts/tools/expert-tool-annotations";
import { buildExpertServer, replaceExpertTools } from "../server/expert-mcp-server";
import type { CallerContext, InFlightCalls } from "../server/expert-tool-call";
import { answerTaskMessage, isTaskMessage, type TaskContext } from "../tasks/expert-tasks";
import { log } from "../../observability/logger";
import { type ClientProfile, profileOf } from "../inbound/client-profile";
import { SseServerTransport } from "./sse-server-transport";
import { SseTaskStatus } from "./sse-task-status";
import { type LedgerInitialize, REMEMBER_AFTER_BUDGET_MS, SseCallLedger } from "./sse-call-ledger";
import { SseStreamIndex } from "./sse-stream-index";
import { answerOf, streamIndex, type HandedOver, takeOverCutCalls } from "./sse-hand-over";

const KEEP_ALIVE_MS = 15_000;

export interface SseOpenRequest {
  sessionId: string;
  skill: string;
  user: UserProps;
  /** Path (with query) the client must POST its messages to. */
  endpoint: string;
  /** The origin the stream was opened on, for connect links (PUBLIC_URL wins). */
  origin?: string;
  /** Digest of the credential the stream was opened with ("" without one): tells one user's clients apart on a reconnect. */
  client: string;
  /**
   * The GET came from a client that was connected before (its EventSource reconnecting: it sends
   * the `mcp-protocol-version` it negotiated, or `Last-Event-ID`): the calls its cut stream
   * had in flight are answered on this one (sse-hand-over.ts).
   */
  resumed?: { lastEventId?: string };
}

/**
 * One legacy HTTP+SSE stream. The GET stream and the client's POSTs are separate HTTP
 * requests that may land on different Worker isolates, so the stream and its MCP server live
 * here, in a Durable Object named by the session id, where both requests meet.
 */
export class LegacySseSession extends DurableObject<Env> {
  private transport: SseServerTransport | null = null;
  private owner: string | null = null;
  private timer: ReturnType<typeof setInterval> | null = null;
  private server: McpServer | null = null;
  private skill: CompiledSkill | null = null;
  private user: UserProps | null = null;
  private sessionId = "";
  /** The origin the client opened the stream at: connect links point there (no request rides along with a message). */
  private origin: string | undefined;
  /** `notifications/tasks/status` for the tasks this stream created (opened with the first). */
  private taskStatus: SseTaskStatus | null = null;
  /** What the client is, as its `initialize` said: fixed for the stream (a server's tools and capabilities are). */
  private profile: ClientProfile | null = null;
  private starting: Promise<McpServer | null> | null = null;
  /** The calls in flight on this stream, durably (a restart loses the rest of this object). */
  private readonly ledger = new SseCallLedger(this.ctx.storage);
  /** In the object named by streamIndexName only: this user's streams with calls lately. */
  private readonly streams = new SseStreamIndex(this.ctx.storage);
  private client = "";
  /** What the client's `initialize` said: this stream's, or the cut one's it continues. */
  private initialize: LedgerInitialize | undefined;
  /** Until when this stream is listed in its user's index. */
  private indexedUntil = 0;

  async open(request: SseOpenRequest): Promise<ReadableStream<Uint8Array> | null> {
    const skill = await loadSkill(this.env, request.skill);
    if (!skill) return null;
    // Taken over before the stream is returned: the old stream's ledger is empty once this one answers its calls.
    const handedOver: HandedOver = request.resumed
      ? await takeOverCutCalls(this.env, skill.name, request.user.userId, request.sessionId, { ...request.resumed, client: request.client }).catch(
          (error: unknown) => {
            log("error", "legacy SSE reconnect could not take over the cut calls", { error: String(error) });
            return { calls: [] };
          },
        )
      : { calls: [] };
    const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>();
    const transport = new SseServerTransport(writable.getWriter(), request.sessionId);
    transport.onclose = () => this.reset();
    this.transport = transport;
    this.owner = request.user.userId;
    // The MCP server is built at the client's first message (serverFor): what its `initialize`
    // declares is the stream's ClientProfile (MCP Apps, elicitation), and a server's tools and
    // capabilities are fixed once it is connected.
    Object.assign(this, {
      skill,
      user: request.user,
      sessionId: request.sessionId,
      origin: request.origin,
      client: request.client,
      initialize: handedOver.initialize,
    });
    this.taskStatus = new SseTaskStatus({ env: this.env, skill, user: request.user }, (notification) => transport.sendOwn(notification));
    void transport.announceEndpoint(request.endpoint);
    // The client's pending requests wait by id: each cut call gets its run's outcome here, at once
    // for a run the restart ended, at the run's end for one still going.
    for (const call of handedOver.calls) {
      void answerOf(this.env, skill.name, request.user.userId, call)
        .then((answer) => transport.send(answer))
        .catch((error: unknown) => log("error", "legacy SSE hand-over answer failed", { runId: call.runId, error: String(error) }));
    }
    // The catalog is written elsewhere (an announcement in this isolate would run in the writer's
    // context, which may not touch this object's stream): the skill's live version is read at
    // each keep-alive and before each client message (KV, a few seconds' memo).
    this.timer = setInterval(() => {
      void transport.keepAlive();
      void this.refreshTools();
    }, KEEP_ALIVE_MS);
    return readable;
  }

  /**
   * The stream's MCP server, built and connected at the first message (`first`); messages
   * that arrive while it starts wait for the same one.
   */
  private serverFor(first: JSONRPCMessage): Promise<McpServer | null> {
    this.starting ??= this.startServer(first).catch((error: unknown) => {
      this.starting = null;
      throw error;
    });
    return this.starting;
  }

  private async startServer(first: JSONRPCMessage): Promise<McpServer | null> {
    const { transport, skill, user } = this;
    if (!transport || !skill || !user) return null;
    // A stream that continues a cut one gets no second `initialize`: it keeps the first one's.
    const initialize = "method" in first && first.method === "initialize" ? first.params : this.initialize;
    this.initialize = {
      ...(typeof initialize?.protocolVersion === "string" ? { protocolVersion: initialize.protocolVersion } : {}),
      ...(isRecord(initialize?.capabilities) ? { capabilities: initialize.capabilities } : {}),
    };
    // 2025 Tasks are answered by this object before the server (deliver); the profile gives the capability and each tool's taskSupport.
    this.profile = profileOf({
      transport: "legacy-sse",
      revision: typeof initialize?.protocolVersion === "string" ? initialize.protocolVersion : undefined,
      clientSessionId: this.sessionId,
      capabilities: this.initialize.capabilities,
    });
    // This server answers every tools/list of the stream: annotations as cached at its start.
    const listings = await cachedListings(this.env.CACHE, skill.name, skill.config.servers, skill.config.experts);
    const server = buildExpertServer(this.serverContext(skill, user, this.profile), { listings });
    await server.connect(transport);
    this.server = server;
    return server;
  }

  /** A new catalog version of the skill: the stream's tools become its experts, and the client hears list_changed. */
  private async refreshTools(): Promise<void> {
    const current = this.skill;
    if (!current || !this.server || !this.user) return;
    const fresh = await loadSkill(this.env, current.name).catch(() => null);
    if (!fresh || fresh.version === current.version || this.skill !== current) return;
    this.skill = fresh;
    const listings = await cachedListings(this.env.CACHE, fresh.name, fresh.config.servers, fresh.config.experts);
    if (this.profile) replaceExpertTools(this.server, this.serverContext(fresh, this.user, this.profile), { listings });
  }

  private serverContext(skill: CompiledSkill, user: UserProps, profile: ClientProfile): CallerContext {
    return { env: this.env, skill, user, profile, inFlight: this.inFlight, ...(this.origin === undefined ? {} : { origin: this.origin }) };
  }

  private readonly inFlight: InFlightCalls = {
    started: async ({ requestId, runId, structured, timeoutMs }) => {
      const { owner, skill } = this;
      if (!owner || !skill) return;
      const now = Date.now();
      const deadline = now + timeoutMs;
      const expiresAt = deadline + REMEMBER_AFTER_BUDGET_MS;
      try {
        const identity = { owner, client: this.client, ...(this.initialize ? { initialize: this.initialize } : {}) };
        await this.sweepNoEarlierThan(this.ledger.record({ requestId, runId, structured, deadline, expiresAt }, identity, now));
        if (expiresAt > this.indexedUntil) {
          // Listed a while past this call's expiry, so the next calls need no round trip.
          this.indexedUntil = expiresAt + REMEMBER_AFTER_BUDGET_MS * 10;
          await streamIndex(this.env, skill.name, owner).noteStream(this.sessionId, this.indexedUntil);
        }
      } catch (error) {
        log("warn", "legacy SSE call ledger not written", { runId, error: String(error) });
      }
    },
    ended: (requestId) => {
      try {
        this.ledger.settle(requestId);
      } catch (error) {
        // The call's answer goes out regardless; the entry expires with the ledger's alarm.
        log("warn", "legacy SSE call ledger not settled", { error: String(error) });
      }
    },
  };

  /** In this user's index object: a stream had a call in flight, and is listed until `until`. */
  async noteStream(sessionId: string, until: number): Promise<void> {
    await this.sweepNoEarlierThan(this.streams.note(sessionId, until));
  }

  async recentStreams(): Promise<string[]> {
    return this.streams.recent();
  }

  /** How many calls a reconnect of `userId` (opened with `client`, when given) may take over: none while this stream's stream is open. */
  async cutCalls(userId: string, client?: string): Promise<number> {
    return this.isOpen() ? 0 : this.ledger.cut(userId, client).length;
  }

  async takeCutCalls(userId: string, client?: string): Promise<HandedOver> {
    return this.isOpen() ? { calls: [] } : this.ledger.take(userId, client);
  }

  /** The ledger and the index expire: nothing stays stored for a stream no client came back to. */
  override async alarm(): Promise<void> {
    const empty = [this.ledger.sweep(), this.streams.sweep()].every(Boolean);
    if (!empty) await this.ctx.storage.setAlarm(Date.now() + REMEMBER_AFTER_BUDGET_MS);
  }

  private isOpen(): boolean {
    return this.transport !== null && !this.transport.isClosed;
  }

  private async sweepNoEarlierThan(at: number): Promise<void> {
    const current = await this.ctx.storage.getAlarm();
    if (current === null || current < at) await this.ctx.storage.setAlarm(at);
  }

  /** Returns the HTTP status for the client's POST (202 accepted, as the 2024-11-05 spec says). */
  async deliver(userId: string, body: unknown): Promise<number> {
    if (!this.transport || this.transport.isClosed) return 404;
    // The session id travels in a URL; only the user who opened the stream may post to it.
    if (userId !== this.owner) return 403;
    let message: ReturnType<typeof parseJSONRPCMessage>;
    try {
      message = parseJSONRPCMessage(body);
    } catch {
      return 400;
    }
    if (!(await this.serverFor(message))) return 404;
    await this.refreshTools();
    // MCP Tasks (2025-11-25) as on Streamable HTTP (expert-tasks.ts), the answer on the stream;
    // not awaited, since tasks/result waits for the task's end and the POST is answered 202 at once.
    if (this.skill && this.user && isTaskMessage(message, this.skill)) {
      void this.answerTask(message, this.transport, { env: this.env, skill: this.skill, user: this.user });
      return 202;
    }
    this.transport.deliver(message);
    return 202;
  }

  private async answerTask(message: JSONRPCMessage, transport: SseServerTransport, context: TaskContext): Promise<void> {
    try {
      const answered = await answerTaskMessage(message, context);
      if (answered) {
        await transport.sendOwn(answered);
        // A created task's run is new in the caller's resources/list, as a plain call's is.
        if (this.taskStatus?.followCreated(answered)) void this.server?.sendResourceListChanged();
      }
      // A tasks/* method the 2025-11-25 Tasks do not have: the server refuses it (-32601).
      else transport.deliver(message);
    } catch (error) {
      log("error", "task message over legacy SSE failed", { error: String(error) });
    }
  }

  private reset(): void {
    if (this.timer) clearInterval(this.timer);
    this.taskStatus?.close();
    this.taskStatus = null;
    this.server = null;
    this.starting = null;
    this.profile = null;
    this.skill = null;
    this.timer = null;
    this.transport = null;
    this.owner = null;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
