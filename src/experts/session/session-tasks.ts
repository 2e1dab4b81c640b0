import { log } from "../../observability/logger";
import type { StepProgress } from "../run/expert-types";
import type { ExpertCallRequest, ExpertCallResult, ProgressReporter } from "./expert-call";
import { type StoredTask, type TaskOutcome, type TaskStatus, TaskStore } from "./task-store";

/** How long an outcome request waits for a working task that does not run in this instance (yet). */
const IDLE_WAIT_MS = 1_000;

export interface SessionTaskDeps {
  sql: SqlStorage;
  /** Runs the call in the session, as a plain tools/call would. */
  run(request: ExpertCallRequest, onProgress: ProgressReporter): Promise<ExpertCallResult>;
  cancelRun(runId: string): Promise<boolean>;
  /** Brings the session's alarm forward to `due`: the alarm keeps the object alive while tasks run. */
  wakeAt(due: number): Promise<void>;
}

/**
 * Expert calls run as MCP Tasks, independent of the request that created them: the call starts
 * at once, and the alarm handler (onAlarm) waits for the running ones, which keeps the object
 * alive; a task a restart cut off is still "working" in SQLite with its request, and the next
 * alarm runs it again under a new run id (at most MAX_TASK_ATTEMPTS times).
 */
export class SessionTasks {
  private readonly store: TaskStore;
  private readonly running = new Map<string, Promise<void>>();

  constructor(private readonly deps: SessionTaskDeps) {
    this.store = new TaskStore(deps.sql);
  }

  async start(taskId: string, request: ExpertCallRequest, structuredExpected: boolean, ttlMs: number): Promise<StoredTask> {
    const task = this.store.create(taskId, request, structuredExpected, ttlMs, Date.now());
    this.launch(task, request);
    await this.deps.wakeAt(Date.now());
    return this.store.getTask(taskId) ?? task;
  }

  get(taskId: string): StoredTask | null {
    return this.store.getTask(taskId);
  }

  list(limit: number, after?: string): StoredTask[] {
    return this.store.list(limit, after);
  }

  /**
   * The task and its result once it ended, waiting at most `waitMs` for a working one: until its
   * run ends when it runs here, else (waiting for the alarm to rerun it) a poll interval's worth.
   */
  async outcome(taskId: string, waitMs: number): Promise<TaskOutcome | null> {
    const running = this.running.get(taskId);
    const pending = running ?? (this.store.getTask(taskId)?.status === "working" ? null : undefined);
    if (pending !== undefined) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const waited = new Promise((resolve) => (timer = setTimeout(resolve, pending ? waitMs : Math.min(waitMs, IDLE_WAIT_MS))));
      await Promise.race(pending ? [pending, waited] : [waited]);
      if (timer !== undefined) clearTimeout(timer);
    }
    return this.store.outcome(taskId);
  }

  /** Null: no such task. A task that already ended is returned as it is (the caller refuses the cancel). */
  async cancel(taskId: string): Promise<StoredTask | null> {
    const task = this.store.getTask(taskId);
    if (task?.status !== "working") return task;
    this.store.end(taskId, "cancelled", "Cancelled by the client.", null, Date.now());
    await this.deps.cancelRun(task.runId);
    return this.store.getTask(taskId);
  }

  /** The alarm's part: drop expired tasks, start those a restart cut off, wait for every running one. */
  /** Returns how many running tasks it waited for. */
  async onAlarm(now = Date.now()): Promise<number> {
    this.store.purgeExpired(now);
    for (const { task, request } of this.store.working()) this.launch(task, request);
    const running = [...this.running.values()];
    await Promise.allSettled(running);
    return running.length;
  }

  nextDue(now: number): number | null {
    return this.store.nextDue(now, new Set(this.running.keys()));
  }

  private launch(task: StoredTask, request: ExpertCallRequest): void {
    if (this.running.has(task.taskId)) return;
    // The first attempt keeps the run id the caller minted; a rerun is a new run.
    const runId = task.attempts === 0 ? request.runId : crypto.randomUUID();
    if (!this.store.attempt(task.taskId, runId, Date.now())) return;
    const done = this.execute(task.taskId, { ...request, runId }).finally(() => this.running.delete(task.taskId));
    this.running.set(task.taskId, done);
  }

  private async execute(taskId: string, request: ExpertCallRequest): Promise<void> {
    const onProgress = (progress: StepProgress) => this.store.progress(taskId, progressMessage(progress), Date.now());
    try {
      const result = await this.deps.run(request, onProgress);
      const [status, message] = ending(result);
      // A cancel that ended the task first keeps it cancelled; the run's record is still attached.
      if (!this.store.end(taskId, status, message, result, Date.now())) this.store.attachResult(taskId, result);
    } catch (error) {
      log("error", "expert task failed", { taskId, runId: request.runId, error: String(error) });
      this.store.end(taskId, "failed", `The expert session failed while running the task (run ${request.runId}).`, null, Date.now());
    }
  }
}

function progressMessage(progress: StepProgress): string {
  return `Step ${progress.step} of at most ${progress.maxSteps}: ${progress.message}`;
}

/** A run's outcome as a task status: an error is a failed task, a cancelled run a cancelled one. */
function ending(result: ExpertCallResult): [Exclude<TaskStatus, "working">, string] {
  if (result.outcome === "error") return ["failed", result.text.slice(0, 1_000)];
  if (result.outcome === "cancelled") return ["cancelled", "The run was cancelled."];
  if (result.outcome === "paused") return ["completed", "The expert asks a question: fetch the result."];
  return ["completed", result.outcome === "budget_exhausted" ? "Done (a budget ran out)." : "Done."];
}
