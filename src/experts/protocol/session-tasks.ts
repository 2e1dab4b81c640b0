import { log } from "../../observability/logger";
import type { StepProgress } from "../core/run-types";
import type { ExpertCallRequest, ExpertCallResult, ProgressReporter } from "../core/call-types";
import { interruptedRunResult } from "./interrupted-run";
import { type PendingInput, type StoredTask, type TaskGeneration, type TaskOutcome, type TerminalStatus, TaskStore } from "./task-store";

/** The user's reply to an `input_required` task, as the MCP layer read it from `tasks/update`. */
export type TaskInputReply = { approve: boolean; refusal?: "declined" | "cancelled" } | { answer: string };

/** How long an outcome request waits for a working task that does not run in this instance (yet). */
const IDLE_WAIT_MS = 1_000;

export interface SessionTaskDeps {
  sql: SqlStorage;
  /** Runs the call in the session, as a plain tools/call would. */
  run(request: ExpertCallRequest, onProgress: ProgressReporter): Promise<ExpertCallResult>;
  cancelRun(runId: string): Promise<boolean>;
  /** Brings the session's alarm forward to `due`: the alarm keeps the object alive while tasks run. */
  wakeAt(due: number): Promise<void>;
  /** A task's status changed after its creation (for `subscriptions/listen`: session-listeners.ts). */
  changed?(taskId: string): void;
}

/**
 * Expert calls run as MCP Tasks, independent of the request that created them: the call starts
 * at once, and the alarm handler (onAlarm) waits for the running ones, which keeps the object
 * alive. A task a restart cut off fails (interrupted) when the fresh instance starts: it is not
 * run again behind the client's back, since its run may have called downstream tools already;
 * the client sees why and may call again, as a plain call's client does.
 */
export class SessionTasks {
  private readonly store: TaskStore;
  private readonly running = new Map<string, Promise<void>>();

  constructor(private readonly deps: SessionTaskDeps) {
    this.store = new TaskStore(deps.sql);
  }

  async start(taskId: string, request: ExpertCallRequest, structuredExpected: boolean, ttlMs: number, generation: TaskGeneration = "v1"): Promise<StoredTask> {
    const task = this.store.create(taskId, request, structuredExpected, ttlMs, Date.now(), generation);
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
    if (task?.status !== "working" && task?.status !== "input_required") return task;
    if (this.store.end(taskId, "cancelled", "Cancelled by the client.", null, Date.now())) this.deps.changed?.(taskId);
    // A task waiting for input has no run going (its run paused and ended).
    if (task.status === "working") await this.deps.cancelRun(task.runId);
    return this.store.getTask(taskId);
  }

  /**
   * The user's reply to the input a 2026-07-28 task waits for (tasks/update): the paused run's
   * thread is called again with the decision, as the same task. False when the task does not
   * wait for input keyed `key` (an answer that came twice, or after a cancel), which changes nothing.
   */
  async answer(taskId: string, key: string, reply: TaskInputReply): Promise<boolean> {
    const task = this.store.getTask(taskId);
    const waiting = task?.status === "input_required" ? task.input : null;
    const stored = this.store.request(taskId);
    if (!waiting || waiting.key !== key || !stored) return false;
    const { answer: _answer, approve: _approve, refusal: _refusal, ...call } = stored;
    const request: ExpertCallRequest = { ...call, runId: crypto.randomUUID(), thread: waiting.thread, decidedBy: "user", ...reply };
    if (!this.store.resume(taskId, key, request, Date.now())) return false;
    this.deps.changed?.(taskId);
    const resumed = this.store.getTask(taskId);
    if (resumed) this.launch(resumed, request);
    await this.deps.wakeAt(Date.now());
    return true;
  }

  /**
   * On a fresh instance nothing runs yet, so every "working" task's run was cut off by the
   * restart (the constructor closes those runs as interrupted): each task fails with the same
   * tool error a resumed call gets. Returns the task ids (their listeners are told).
   */
  interrupted(now: number): string[] {
    return this.store
      .working()
      .filter(({ task }) => this.store.end(task.taskId, "failed", interruptedRunResult(task.runId).text, interruptedRunResult(task.runId, task.updatedAt), now))
      .map(({ task }) => task.taskId);
  }

  /** The alarm's part: drop expired tasks, wait for every running one. Returns how many it waited for. */
  async onAlarm(now = Date.now()): Promise<number> {
    this.store.purgeExpired(now);
    const running = [...this.running.values()];
    await Promise.allSettled(running);
    return running.length;
  }

  nextDue(now: number): number | null {
    return this.store.nextDue(now, new Set(this.running.keys()));
  }

  private launch(task: StoredTask, request: ExpertCallRequest): void {
    if (this.running.has(task.taskId)) return;
    if (!this.store.attempt(task.taskId, request.runId, Date.now())) return;
    const done = this.execute(task.taskId, request, task.generation).finally(() => this.running.delete(task.taskId));
    this.running.set(task.taskId, done);
  }

  private async execute(taskId: string, request: ExpertCallRequest, generation: TaskGeneration): Promise<void> {
    const onProgress = (progress: StepProgress) => this.store.progress(taskId, progressMessage(progress), Date.now());
    try {
      const result = await this.deps.run(request, onProgress);
      const input = generation === "v2" ? pendingInput(result) : undefined;
      if (input) {
        const waiting = this.store.awaitInput(
          taskId,
          input,
          input.question.kind === "approval" ? "Waiting for the user's approval." : "Waiting for the user's answer.",
          Date.now(),
        );
        if (waiting) this.deps.changed?.(taskId);
        return;
      }
      const [status, message] = ending(result, generation);
      // A cancel that ended the task first keeps it cancelled; the run's record is still attached.
      if (this.store.end(taskId, status, message, result, Date.now())) this.deps.changed?.(taskId);
      else this.store.attachResult(taskId, result);
    } catch (error) {
      log("error", "expert task failed", { taskId, runId: request.runId, error: String(error) });
      if (this.store.end(taskId, "failed", `The expert session failed while running the task (run ${request.runId}).`, null, Date.now())) {
        this.deps.changed?.(taskId);
      }
    }
  }
}

function progressMessage(progress: StepProgress): string {
  return `Step ${progress.step} of at most ${progress.maxSteps}: ${progress.message}`;
}

/** A run paused on a question for its user or on calls awaiting approval: the input a 2026-07-28 task waits for. */
function pendingInput(result: ExpertCallResult): PendingInput | undefined {
  const question = result.question;
  if (result.outcome !== "paused" || !question || !result.thread || question.kind === "orchestrator") return undefined;
  return {
    key: `input-${result.runId}`,
    thread: result.thread,
    question: { ...question, kind: question.kind },
  };
}

/**
 * A run's outcome as a task status: a cancelled run is a cancelled task. A run that ended in
 * error is a failed 2025-11-25 task; the 2026-07-28 extension keeps "failed" for protocol errors,
 * so there the task completes with the error result (`isError`), as the tool call would have.
 */
function ending(result: ExpertCallResult, generation: TaskGeneration): [TerminalStatus, string] {
  if (result.outcome === "error") return generation === "v2" ? ["completed", "The run ended in an error."] : ["failed", result.text.slice(0, 1_000)];
  if (result.outcome === "cancelled") return ["cancelled", "The run was cancelled."];
  if (result.outcome === "paused")
    return ["completed", generation === "v2" ? "The expert asks a question: see the result." : "The expert asks a question: fetch the result."];
  return ["completed", result.outcome === "budget_exhausted" ? "Done (a budget ran out)." : "Done."];
}
