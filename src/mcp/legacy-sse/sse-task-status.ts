import { z } from "zod";
import { sessionStub } from "../../experts/session/session-name";
import { parseListenerMessage, type WatchMessage } from "../../experts/protocol/session-listeners";
import { log } from "../../observability/logger";
import { type TaskContext, wireTask } from "../tasks/expert-tasks";

/** A created task as answerTaskMessage answers `tools/call` with `task`. */
const createdSchema = z.object({ result: z.object({ task: z.object({ taskId: z.string().max(100), status: z.string() }) }) });

export interface TaskStatusNotification {
  jsonrpc: "2.0";
  method: "notifications/tasks/status";
  params: Record<string, unknown>;
}

/**
 * `notifications/tasks/status` (2025-11-25, optional) for the tasks a legacy SSE stream
 * created: unlike stateless Streamable HTTP, the stream has a stream to send them on. The
 * first task opens one WebSocket to the caller's own ExpertSession (session-listeners.ts, as a
 * 2026-07-28 listen stream does) and each task is added to it; a signal names the task, which is
 * read as `tasks/get` answers it and sent when its status changed. A stream that creates no
 * task opens nothing.
 */
export class SseTaskStatus {
  private socket: Promise<WebSocket | null> | null = null;
  /** The status last sent (or answered at creation) per task, so a status goes out once. */
  private readonly sent = new Map<string, string>();
  private queue = Promise.resolve();
  private closed = false;

  constructor(
    private readonly context: TaskContext,
    private readonly send: (notification: TaskStatusNotification) => Promise<void>,
  ) {}

  /** After a `tools/call` answer: follows the task it created, if it created one (true then). */
  followCreated(answer: unknown): boolean {
    const created = createdSchema.safeParse(answer);
    if (!created.success || this.closed) return false;
    const { taskId, status } = created.data.result.task;
    this.sent.set(taskId, status);
    this.socket ??= this.open();
    void this.socket.then((ws) => ws?.send(JSON.stringify({ type: "watch", taskId } satisfies WatchMessage)));
    return true;
  }

  close(): void {
    this.closed = true;
    void this.socket?.then((ws) => {
      try {
        ws?.close(1000, "The SSE stream ended.");
      } catch {
        // Already closed.
      }
    });
  }

  private async open(): Promise<WebSocket | null> {
    const { env, skill, user } = this.context;
    try {
      const response = await sessionStub(env, skill.name, user.userId).fetch("https://expert-session/listen?generation=v1", {
        headers: { upgrade: "websocket" },
      });
      const ws = response.webSocket;
      // Refused (the user's listen limit): the client polls, as it may.
      if (!ws) return null;
      ws.accept();
      ws.addEventListener("message", (event) => {
        const message = parseListenerMessage(event.data);
        if (message?.type === "task") this.enqueue(message.taskId);
      });
      return ws;
    } catch (error) {
      log("warn", "task status socket not opened", { error: String(error) });
      return null;
    }
  }

  private enqueue(taskId: string): void {
    this.queue = this.queue.then(async () => {
      if (this.closed) return;
      try {
        const task = await sessionStub(this.context.env, this.context.skill.name, this.context.user.userId).task(taskId);
        if (task?.generation !== "v1" || this.sent.get(taskId) === task.status) return;
        this.sent.set(taskId, task.status);
        await this.send({ jsonrpc: "2.0", method: "notifications/tasks/status", params: wireTask(task) });
      } catch (error) {
        log("warn", "task status notification not sent", { taskId, error: String(error) });
      }
    });
  }
}
