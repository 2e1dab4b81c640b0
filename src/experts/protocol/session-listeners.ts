import { z } from "zod";

/** The tag of listen sockets among the session's hibernatable WebSockets. */
const LISTEN_TAG = "listen";
/** Listen streams one user may hold open on one skill at a time (each is a socket here). */
export const MAX_LISTENERS = 8;
/** Task ids one listen stream may name; more are dropped from its filter (and its acknowledgement). */
export const MAX_LISTENED_TASKS = 100;
const MAX_TASK_ID_CHARS = 100;

/**
 * What a listen socket asked for, kept on the socket so it survives the object's hibernation:
 * the tasks of one Tasks generation (v2: a 2026-07-28 listen stream; v1: a legacy SSE
 * stream's own 2025-11-25 tasks, added one by one as it creates them).
 */
const attachmentSchema = z.object({ resources: z.boolean(), taskIds: z.array(z.string()), generation: z.enum(["v1", "v2"]).default("v2") });
type ListenAttachment = z.infer<typeof attachmentSchema>;

/**
 * What the session sends a listen socket: first the task ids it honours (the caller's own
 * 2026-07-28 tasks among those asked for), then a signal per change. A signal names what changed,
 * not its state: the MCP surface reads the task as `tasks/get` would (listen-stream.ts), so the
 * notification is exactly that answer and the session needs no MCP wire code.
 */
export const listenerMessageSchema = z.discriminatedUnion("type", [
  z.object({ type: z.literal("ack"), taskIds: z.array(z.string().max(MAX_TASK_ID_CHARS)).max(MAX_LISTENED_TASKS) }),
  z.object({ type: z.literal("resources") }),
  z.object({ type: z.literal("task"), taskId: z.string().max(MAX_TASK_ID_CHARS) }),
]);
export type ListenerMessage = z.infer<typeof listenerMessageSchema>;

/** A message from a listen socket as the MCP surface receives it; null for anything else. */
export function parseListenerMessage(data: unknown): ListenerMessage | null {
  if (typeof data !== "string") return null;
  try {
    const parsed = listenerMessageSchema.safeParse(JSON.parse(data));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

/** What the MCP surface may send on a socket: one more of the session's tasks to follow (legacy SSE). */
const watchSchema = z.object({ type: z.literal("watch"), taskId: z.string().min(1).max(MAX_TASK_ID_CHARS) });
export type WatchMessage = z.infer<typeof watchSchema>;

/** Why the session refused a listen socket (the MCP surface answers -32603 "Subscription limit reached"). */
export const LISTENER_LIMIT_STATUS = 429;

/**
 * The `subscriptions/listen` streams of one user in one skill (2026-07-28), as WebSockets the MCP
 * surface opens to this session and holds while its client listens. This object belongs to the
 * caller (tenant, skill, user), so a listen socket can only ever hear of the caller's own runs
 * and tasks: no event carries a user id to filter on, none is needed. The sockets are accepted
 * with the hibernation API, so a session nobody calls sleeps while its user listens (an SSE
 * stream from here would keep it in memory all that time: docs/platform-notes.md).
 *
 * The expert call path pays for this only with `getWebSockets` when nobody listens: no storage
 * operation, no RPC, no event built.
 */
export class SessionListeners {
  constructor(
    private readonly ctx: DurableObjectState,
    /** Whether `taskId` is one of this session's tasks of that generation (the only ones a socket may follow). */
    private readonly ownTask: (taskId: string, generation: "v1" | "v2") => boolean,
  ) {}

  /** The MCP surface's WebSocket upgrade (`/listen?resources=1&task=<id>…`); nothing else reaches the session's fetch. */
  accept(request: Request): Response {
    if (request.headers.get("upgrade")?.toLowerCase() !== "websocket") return new Response("Expected a WebSocket upgrade.", { status: 426 });
    const url = new URL(request.url);
    if (url.pathname !== "/listen") return new Response("Not Found", { status: 404 });
    if (this.ctx.getWebSockets(LISTEN_TAG).length >= MAX_LISTENERS) return new Response("Too many listen streams.", { status: LISTENER_LIMIT_STATUS });
    const asked = [...new Set(url.searchParams.getAll("task"))].filter((id) => id.length > 0 && id.length <= MAX_TASK_ID_CHARS);
    const generation = url.searchParams.get("generation") === "v1" ? "v1" : "v2";
    const attachment: ListenAttachment = {
      resources: url.searchParams.get("resources") === "1",
      taskIds: asked.slice(0, MAX_LISTENED_TASKS).filter((id) => this.ownTask(id, generation)),
      generation,
    };
    const { 0: client, 1: server } = new WebSocketPair();
    this.ctx.acceptWebSocket(server, [LISTEN_TAG]);
    server.serializeAttachment(attachment);
    server.send(JSON.stringify({ type: "ack", taskIds: attachment.taskIds } satisfies ListenerMessage));
    return new Response(null, { status: 101, webSocket: client });
  }

  /** A run was recorded: the caller's `resources/list` (slipsnisse://runs/…) has a new entry. */
  runsChanged(): void {
    this.signal((wants) => wants.resources, { type: "resources" });
  }

  /** A task's status changed (input_required, working again, ended). */
  taskChanged(taskId: string): void {
    this.signal((wants) => wants.taskIds.includes(taskId), { type: "task", taskId });
  }

  /**
   * A legacy SSE stream follows a task it just created (`{"type":"watch","taskId"}`): added
   * when it is this session's own task of the socket's generation, and signalled at once, so a
   * change between its creation and the watch is not missed. Anything else is ignored.
   */
  message(ws: WebSocket, data: string | ArrayBuffer): void {
    if (typeof data !== "string" || data.length > 1_000) return;
    let watch: WatchMessage;
    let attachment: ListenAttachment;
    try {
      watch = watchSchema.parse(JSON.parse(data));
      attachment = attachmentSchema.parse(ws.deserializeAttachment());
    } catch {
      return;
    }
    if (!this.ownTask(watch.taskId, attachment.generation) || attachment.taskIds.length >= MAX_LISTENED_TASKS) return;
    if (!attachment.taskIds.includes(watch.taskId)) ws.serializeAttachment({ ...attachment, taskIds: [...attachment.taskIds, watch.taskId] });
    ws.send(JSON.stringify({ type: "task", taskId: watch.taskId } satisfies ListenerMessage));
  }

  /** The MCP surface closed its end (its client left): close ours. */
  closed(ws: WebSocket, code: number, reason: string): void {
    try {
      ws.close(code === 1005 || code === 1006 ? 1000 : code, reason);
    } catch {
      // Already closed by the runtime.
    }
  }

  private signal(wants: (attachment: ListenAttachment) => boolean, message: ListenerMessage): void {
    const sockets = this.ctx.getWebSockets(LISTEN_TAG);
    // Nobody listens: the whole cost on a run's path.
    if (sockets.length === 0) return;
    const text = JSON.stringify(message);
    for (const ws of sockets) {
      const attachment = attachmentSchema.safeParse(ws.deserializeAttachment());
      if (!attachment.success || !wants(attachment.data)) continue;
      try {
        ws.send(text);
      } catch {
        // Closing: the MCP surface's end is gone, and webSocketClose follows.
      }
    }
  }
}
