import { hasTaskClientCapabilityV2 } from "@modelcontextprotocol/ext-tasks/core/v2";
import { type JSONRPCRequest, SERVER_INFO_META_KEY, SUBSCRIPTION_ID_META_KEY } from "@modelcontextprotocol/server";
import { z } from "zod";
import { onSkillChanged } from "../../catalog/skill-change-events";
import { sessionStub } from "../../experts/session/session-name";
import { LISTENER_LIMIT_STATUS, MAX_LISTENED_TASKS, type ListenerMessage, parseListenerMessage } from "../../experts/protocol/session-listeners";
import { log } from "../../observability/logger";
import { SERVER_INFO } from "../server/expert-mcp-server";
import type { TaskContext } from "./expert-tasks";
import { detailedTask } from "./expert-tasks-extension";
import { replyTo } from "./json-rpc-answer";
import { TasksExtensionNotDeclaredError } from "./task-errors";

/**
 * workerd notices a client that left only when the second write after it fails (mcp-endpoint.ts),
 * and until then the stream holds one of the user's MAX_LISTENERS session sockets: a keep-alive
 * every 2 s frees it about 4 s after the client closed (measured through wrangler dev: 29.6 s at
 * the SDK's 15 s), so a client that reconnects a few times does not lock itself out. Each is a
 * 13-byte write in the Worker; the session is not woken.
 */
const LISTEN_KEEP_ALIVE_MS = 2_000;
/** How long the session has to accept the socket and name the tasks it honours. */
const ACK_TIMEOUT_MS = 10_000;

/** The spec's SubscriptionFilter plus the Tasks extension's `taskIds` (SEP-2663). Unknown fields are ignored. */
const filterSchema = z.looseObject({
  toolsListChanged: z.boolean().optional(),
  promptsListChanged: z.boolean().optional(),
  resourcesListChanged: z.boolean().optional(),
  resourceSubscriptions: z.array(z.string()).optional(),
  taskIds: z.array(z.string().min(1).max(100)).max(MAX_LISTENED_TASKS).optional(),
});
const paramsSchema = z.looseObject({ notifications: filterSchema });

/** What this server honours of a filter: never prompts (it has none) nor resource subscriptions (no `resources.subscribe`). */
interface Honoured {
  toolsListChanged?: true;
  resourcesListChanged?: true;
  taskIds?: string[];
}

/**
 * `subscriptions/listen` (2026-07-28) for this server, answered before the SDK. The SDK's listen
 * router sends every event on its bus to every stream of the path, whoever opened it, and knows
 * nothing of task status: fine for `tools/list_changed` (the skill's tools are the same for all
 * its users), not for a user's runs and tasks. Here a stream carries:
 *
 * - `notifications/tools/list_changed` when the skill's catalog changes in this isolate
 *   (skill-change-events.ts, as the SDK's stream did; other isolates' clients re-list after ttlMs);
 * - `notifications/resources/list_changed` when the caller records a run (a new
 *   slipsnisse://runs/<id> in their resources/list), and
 * - `notifications/tasks` for the caller's own 2026-07-28 tasks named in `taskIds` (the Tasks
 *   extension), first their status at once, then each change: the task as `tasks/get` answers it.
 *
 * The last two come from the caller's own ExpertSession (tenant, skill, user) over a WebSocket it
 * accepts with the hibernation API (session-listeners.ts): another user's runs and tasks are in
 * another object, so no stream can carry them, and a task id of another user is not honoured.
 * The session socket is opened only for a filter that asks for them; the expert call path pays
 * for listening only while a socket is open.
 *
 * Returns null for every other message (the SDK serves it, or refuses a malformed envelope).
 */
export async function serveListen(request: Request, message: JSONRPCRequest, context: TaskContext): Promise<Response | null> {
  if (message.method !== "subscriptions/listen") return null;
  const params = paramsSchema.safeParse(message.params);
  if (!params.success) return rpcError(message, -32602, "Invalid params: 'notifications' is required and must be a valid SubscriptionFilter");
  const filter = params.data.notifications;
  // SEP-2663: task status notifications need the extension declared in the request's capabilities.
  if (filter.taskIds !== undefined && !hasTaskClientCapabilityV2(message.params)) {
    const refusal = new TasksExtensionNotDeclaredError("subscriptions/listen with taskIds");
    return rpcError(message, refusal.code, refusal.toolMessage, refusal.data, refusal.httpStatus);
  }
  const honoured: Honoured = filter.toolsListChanged === true ? { toolsListChanged: true } : {};
  let socket: WebSocket | undefined;
  let ack: Promise<ListenerMessage | null> = Promise.resolve(null);
  if (filter.resourcesListChanged === true || (filter.taskIds?.length ?? 0) > 0) {
    const opened = await openSessionSocket(context, filter.resourcesListChanged === true, filter.taskIds ?? []);
    if (opened === "limit") return rpcError(message, -32603, "Subscription limit reached");
    if (opened === null) return rpcError(message, -32603, "The listen stream could not reach your session; try again.");
    socket = opened.socket;
    ack = opened.ack;
  }
  const first = await ack;
  if (socket && first?.type !== "ack") {
    socket.close(1011, "No acknowledgement.");
    return rpcError(message, -32603, "The listen stream could not reach your session; try again.");
  }
  if (first?.type === "ack") {
    if (filter.resourcesListChanged === true) honoured.resourcesListChanged = true;
    if (first.taskIds.length > 0) honoured.taskIds = first.taskIds;
  }
  return listenResponse(message, honoured, socket, context, request.signal);
}

type Opened = { socket: WebSocket; ack: Promise<ListenerMessage | null> } | "limit" | null;

async function openSessionSocket({ env, skill, user }: TaskContext, resources: boolean, taskIds: readonly string[]): Promise<Opened> {
  const url = new URL("https://expert-session/listen");
  if (resources) url.searchParams.set("resources", "1");
  for (const taskId of taskIds) url.searchParams.append("task", taskId);
  let response: Response;
  try {
    response = await sessionStub(env, skill.name, user.userId).fetch(url, { headers: { upgrade: "websocket" } });
  } catch (error) {
    log("warn", "listen socket not opened", { error: String(error) });
    return null;
  }
  if (response.status === LISTENER_LIMIT_STATUS) return "limit";
  const socket = response.webSocket;
  if (!socket) return null;
  socket.accept();
  // The session sends the honoured task ids first (session-listeners.ts); buffered until read.
  const ack = new Promise<ListenerMessage | null>((resolve) => {
    const timer = setTimeout(() => resolve(null), ACK_TIMEOUT_MS);
    const settle = (value: ListenerMessage | null) => {
      clearTimeout(timer);
      socket.removeEventListener("message", onMessage);
      resolve(value);
    };
    const onMessage = (event: MessageEvent) => settle(parseListenerMessage(event.data));
    socket.addEventListener("message", onMessage);
    socket.addEventListener("close", () => settle(null), { once: true });
  });
  return { socket, ack };
}

/** The SSE stream: the acknowledgement first (the spec's MUST), then the task snapshots, then changes as they come. */
function listenResponse(message: JSONRPCRequest, honoured: Honoured, socket: WebSocket | undefined, context: TaskContext, signal: AbortSignal): Response {
  const subscriptionId = message.id;
  const encoder = new TextEncoder();
  const stamp = { [SUBSCRIPTION_ID_META_KEY]: subscriptionId };
  let closed = false;
  const cleanups: Array<() => void> = [];
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  const write = (frame: string) => {
    if (closed) return;
    try {
      controller.enqueue(encoder.encode(frame));
    } catch {
      teardown(false);
    }
  };
  const notify = (method: string, params: Record<string, unknown>) =>
    write(`event: message\ndata: ${JSON.stringify({ jsonrpc: "2.0", method, params: { ...params, _meta: stamp } })}\n\n`);
  // A graceful end (the spec's "Graceful Closure") when the server ends the stream: the listen request's result.
  const teardown = (graceful: boolean) => {
    if (closed) return;
    if (graceful) {
      write(
        `event: message\ndata: ${JSON.stringify({ jsonrpc: "2.0", id: subscriptionId, result: { resultType: "complete", _meta: { ...stamp, [SERVER_INFO_META_KEY]: SERVER_INFO } } })}\n\n`,
      );
    }
    closed = true;
    for (const cleanup of cleanups) cleanup();
    try {
      socket?.close(1000, "Listen stream ended.");
    } catch {
      // Already closed.
    }
    try {
      controller.close();
    } catch {
      // Already closed or errored.
    }
  };

  // Task notifications in order, each the task as tasks/get would answer now; a status (and input
  // request) already sent is not sent again, as when a change and the first snapshot cross.
  const sent = new Map<string, string>();
  let queue = Promise.resolve();
  const sendTask = (taskId: string) => {
    queue = queue.then(async () => {
      if (closed) return;
      try {
        const task = await sessionStub(context.env, context.skill.name, context.user.userId).task(taskId);
        if (task?.generation !== "v2") return;
        const key = `${task.status}:${task.input?.key ?? ""}`;
        if (sent.get(taskId) === key) return;
        sent.set(taskId, key);
        notify("notifications/tasks", await detailedTask(task, context));
      } catch (error) {
        log("warn", "task notification not sent", { taskId, error: String(error) });
      }
    });
  };

  const readable = new ReadableStream<Uint8Array>({
    start(streamController) {
      controller = streamController;
      notify("notifications/subscriptions/acknowledged", { notifications: honoured });
      if (Object.keys(honoured).length === 0) {
        teardown(true);
        return;
      }
      if (honoured.toolsListChanged) {
        const skill = context.skill.name;
        cleanups.push(onSkillChanged((changed) => changed === skill && notify("notifications/tools/list_changed", {})));
      }
      if (socket) {
        const onMessage = (event: MessageEvent) => {
          const received = parseListenerMessage(event.data);
          if (received?.type === "resources") notify("notifications/resources/list_changed", {});
          else if (received?.type === "task" && honoured.taskIds?.includes(received.taskId)) sendTask(received.taskId);
        };
        socket.addEventListener("message", onMessage);
        // The session went away (a deploy, a reset): end gracefully so the client listens again.
        const onClose = () => teardown(true);
        socket.addEventListener("close", onClose);
        cleanups.push(() => {
          socket.removeEventListener("message", onMessage);
          socket.removeEventListener("close", onClose);
        });
      }
      for (const taskId of honoured.taskIds ?? []) sendTask(taskId);
      const keepAlive = setInterval(() => write(": keepalive\n\n"), LISTEN_KEEP_ALIVE_MS);
      cleanups.push(() => clearInterval(keepAlive));
    },
    cancel() {
      teardown(false);
    },
  });
  if (signal.aborted) teardown(false);
  else signal.addEventListener("abort", () => teardown(false), { once: true });
  return new Response(readable, {
    status: 200,
    headers: { "content-type": "text/event-stream", "cache-control": "no-cache, no-transform", "x-accel-buffering": "no" },
  });
}

function rpcError(message: JSONRPCRequest, code: number, text: string, data?: unknown, status = 200): Response {
  return replyTo(message, { error: { code, message: text, ...(data === undefined ? {} : { data }) } }, status);
}
