import { DurableObject } from "cloudflare:workers";
import { type JSONRPCMessage, parseJSONRPCMessage } from "@modelcontextprotocol/server";
import type { UserProps } from "../../auth/user-props";
import type { McpServer } from "@modelcontextprotocol/server";
import { type CompiledSkill, loadSkill } from "../../catalog/compiled-skill-cache";
import { cachedListings } from "../../experts/tools/expert-tool-annotations";
import { buildExpertServer, replaceExpertTools } from "../server/expert-mcp-server";
import type { CallerContext } from "../server/expert-tool-call";
import { answerTaskMessage, isTaskMessage, type TaskContext } from "../tasks/expert-tasks";
import { log } from "../../observability/logger";
import { type ClientProfile, profileOf } from "../inbound/client-profile";
import { SseServerTransport } from "./sse-server-transport";
import { SseTaskStatus } from "./sse-task-status";

const KEEP_ALIVE_MS = 15_000;

export interface SseOpenRequest {
  sessionId: string;
  skill: string;
  user: UserProps;
  /** Path (with query) the client must POST its messages to. */
  endpoint: string;
  /** The origin the stream was opened on, for connect links (PUBLIC_URL wins). */
  origin?: string;
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
  /** `notifications/tasks/status` for the tasks this connection created (opened with the first). */
  private taskStatus: SseTaskStatus | null = null;
  /** What the client is, as its `initialize` said: fixed for the connection (a server's tools and capabilities are). */
  private profile: ClientProfile | null = null;
  private starting: Promise<McpServer | null> | null = null;

  async open(request: SseOpenRequest): Promise<ReadableStream<Uint8Array> | null> {
    const skill = await loadSkill(this.env, request.skill);
    if (!skill) return null;
    const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>();
    const transport = new SseServerTransport(writable.getWriter(), request.sessionId);
    transport.onclose = () => this.reset();
    this.transport = transport;
    this.owner = request.user.userId;
    // The MCP server is built at the client's first message (serverFor): what its `initialize`
    // declares is the connection's ClientProfile (MCP Apps, elicitation), and a server's tools and
    // capabilities are fixed once it is connected.
    Object.assign(this, { skill, user: request.user, sessionId: request.sessionId, origin: request.origin });
    this.taskStatus = new SseTaskStatus({ env: this.env, skill, user: request.user }, (notification) => transport.sendOwn(notification));
    void transport.announceEndpoint(request.endpoint);
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
   * The connection's MCP server, built and connected at the first message (`first`); messages
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
    const initialize = "method" in first && first.method === "initialize" ? first.params : undefined;
    // 2025 Tasks are answered by this object before the server (deliver); the profile gives the capability and each tool's taskSupport.
    this.profile = profileOf({
      transport: "legacy-sse",
      revision: typeof initialize?.protocolVersion === "string" ? initialize.protocolVersion : undefined,
      clientSessionId: this.sessionId,
      capabilities: initialize?.capabilities,
    });
    // This server answers every tools/list of the connection: annotations as cached at its start.
    const listings = await cachedListings(this.env.CACHE, skill.name, skill.config.servers, skill.config.experts);
    const server = buildExpertServer(this.serverContext(skill, user, this.profile), { listings });
    await server.connect(transport);
    this.server = server;
    return server;
  }

  /** A new catalog version of the skill: the connection's tools become its experts, and the client hears list_changed. */
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
    return { env: this.env, skill, user, profile, ...(this.origin === undefined ? {} : { origin: this.origin }) };
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
