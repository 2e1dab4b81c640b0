import type { CancelByRequestOutcome, ExpertCallRequest, ExpertCallResult, McpRequestRef, ProgressReporter } from "../core/call-types";
import type { StoredRun } from "../records/run-log";
import { ClientReplies, type ClientReply } from "./client-replies";
import { RequestRuns } from "./request-runs";
import { type OpenedRequestState, RequestStates, type RequestStateFields } from "./request-states";
import { FIRST_READER, ResumableStreams, type StreamReplay } from "./resumable-streams";
import { SessionListeners } from "./session-listeners";
import { SessionTasks, type TaskInputReply } from "./session-tasks";
import type { StoredTask, TaskGeneration, TaskOutcome } from "./task-store";

/** What the protocol state needs of the session that runs the experts. */
export interface SessionEngine {
  /** Runs a call as `callExpert` does (a task's run). */
  run(request: ExpertCallRequest, onProgress: ProgressReporter): Promise<ExpertCallResult>;
  /** Aborts a run in flight; false when none here has that id. */
  cancel(runId: string): boolean;
  /** Brings the session's one alarm forward to `due` (tasks wait on it). */
  wakeAt(due: number): Promise<void>;
  /** The run's record, for a resumed stream whose answer is no longer held. */
  runRecord(runId: string): StoredRun | null;
}

/**
 * The MCP protocol state of one ExpertSession, beside the engine that runs the experts: MCP
 * tasks (session-tasks.ts), the `subscriptions/listen` sockets (session-listeners.ts), resumable
 * call streams (resumable-streams.ts), client replies to mid-call requests (client-replies.ts),
 * the runs by the MCP request that started them (request-runs.ts) and the `requestState` handles
 * of 2026-07-28 retries (request-states.ts). The RPC bounds on what a
 * caller passes (limits, waits) are applied here, once.
 */
export class SessionProtocol {
  private readonly tasks: SessionTasks;
  private readonly listeners: SessionListeners;
  private readonly streams: ResumableStreams;
  private readonly replies = new ClientReplies();
  private readonly requests = new RequestRuns();
  private readonly requestStates: RequestStates;

  constructor(
    ctx: DurableObjectState,
    private readonly engine: SessionEngine,
  ) {
    this.streams = new ResumableStreams(ctx.storage.sql, (runId) => engine.runRecord(runId));
    this.requestStates = new RequestStates(ctx.storage.sql);
    this.tasks = new SessionTasks({
      sql: ctx.storage.sql,
      run: (request, onProgress) => engine.run(request, onProgress),
      cancelRun: async (runId) => engine.cancel(runId),
      wakeAt: (due) => engine.wakeAt(due),
      changed: (taskId) => this.listeners.taskChanged(taskId),
    });
    this.listeners = new SessionListeners(ctx, (taskId, generation) => this.tasks.get(taskId)?.generation === generation);
  }

  /**
   * Runs `run` with the call's stream kept here when the call asked for a resumable one, for a
   * client that resumes it after its response dropped (the run goes on).
   */
  async streamed(
    request: ExpertCallRequest,
    onProgress: ProgressReporter | undefined,
    run: (onProgress?: ProgressReporter) => Promise<ExpertCallResult>,
  ): Promise<ExpertCallResult> {
    const stream = request.stream;
    if (!stream) return run(onProgress);
    this.streams.open(stream, request.runId);
    const result = await run((progress) => {
      this.streams.progress(stream.id, progress);
      return onProgress?.(progress);
    });
    this.streams.finish(stream.id, result);
    return result;
  }

  resumeStream(streamId: string, after: number, waitMs: number, reader: string): Promise<StreamReplay | null> {
    return this.streams.after(streamId, after, Math.min(Math.max(waitMs, 0), 30_000), reader);
  }

  streamDropped(streamId: string, graceMs: number, reader = FIRST_READER): void {
    this.streams.giveUpUnlessResumed(streamId, reader, Math.min(Math.max(graceMs, 0), 60_000), (runId) => void this.engine.cancel(runId));
  }

  /** A run began (the listen sockets hear of it; a cancel naming its MCP request finds it). */
  runStarted(runId: string, mcpRequest: McpRequestRef | undefined): void {
    this.requests.started(runId, mcpRequest);
    this.listeners.runsChanged();
  }

  runEnded(runId: string): void {
    this.requests.ended(runId);
  }

  cancelRequest(ref: McpRequestRef): CancelByRequestOutcome {
    return this.requests.cancel(ref, (runId) => this.engine.cancel(runId));
  }

  awaitClientReply(requestId: string, timeoutMs: number): Promise<ClientReply> {
    return this.replies.wait(requestId, Math.min(Math.max(timeoutMs, 1), 3_600_000));
  }

  mintRequestState(expert: string, state: RequestStateFields): Promise<string> {
    return this.requestStates.mint(expert, state, Date.now());
  }

  useRequestState(expert: string, handle: string): Promise<OpenedRequestState> {
    return this.requestStates.use(expert, handle, Date.now());
  }

  deliverClientReply(requestId: string, reply: ClientReply): boolean {
    return this.replies.deliver(requestId, reply);
  }

  accept(request: Request): Response {
    return this.listeners.accept(request);
  }

  socketMessage(ws: WebSocket, message: string | ArrayBuffer): void {
    this.listeners.message(ws, message);
  }

  socketClosed(ws: WebSocket, code: number, reason: string): void {
    this.listeners.closed(ws, code, reason);
  }

  startTask(taskId: string, request: ExpertCallRequest, structuredExpected: boolean, ttlMs: number, generation: TaskGeneration): Promise<StoredTask> {
    return this.tasks.start(taskId, request, structuredExpected, ttlMs, generation);
  }

  answerTask(taskId: string, key: string, reply: TaskInputReply): Promise<boolean> {
    return this.tasks.answer(taskId, key, reply);
  }

  task(taskId: string): StoredTask | null {
    return this.tasks.get(taskId);
  }

  taskList(limit: number, after?: string): StoredTask[] {
    return this.tasks.list(Math.min(Math.max(limit, 1), 200), after);
  }

  taskOutcome(taskId: string, waitMs: number): Promise<TaskOutcome | null> {
    return this.tasks.outcome(taskId, Math.min(Math.max(waitMs, 0), 60_000));
  }

  cancelTask(taskId: string): Promise<StoredTask | null> {
    return this.tasks.cancel(taskId);
  }

  /**
   * A fresh instance has no run in flight: every working task's run was cut off by a restart
   * and fails saying so. Called inside the constructor's transaction; `announce` tells the
   * listen sockets afterwards.
   */
  tasksInterrupted(now: number): string[] {
    return this.tasks.interrupted(now);
  }

  announceTasks(taskIds: readonly string[]): void {
    for (const taskId of taskIds) this.listeners.taskChanged(taskId);
  }

  /** The alarm waits for running tasks; how many it waited for. */
  tasksOnAlarm(): Promise<number> {
    return this.tasks.onAlarm();
  }

  tasksDue(now: number): number | null {
    return this.tasks.nextDue(now);
  }
}
