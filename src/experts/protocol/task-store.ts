import { z } from "zod";
import { userPropsSchema } from "../../auth/user-props";
import { RUN_OUTCOMES } from "../core/run-types";
import type { ExpertCallRequest, ExpertCallResult, PausedAnswer } from "../core/call-types";

/**
 * MCP Tasks statuses. `input_required` only for a 2026-07-28 task ("v2") whose run waits for its
 * user (an approval or an ask_user question, answered through `tasks/update`); a 2025-11-25 task
 * answers the question in its result instead.
 */
export type TaskStatus = "working" | "input_required" | "completed" | "failed" | "cancelled";

/** Which Tasks protocol a task was created through: 2025-11-25 core Tasks, or the 2026-07-28 extension. */
export type TaskGeneration = "v1" | "v2";

/** What an `input_required` task waits for: the paused run's thread and its question for the user. */
export interface PendingInput {
  /** The key the client answers under in `tasks/update`; a new one per round. */
  key: string;
  thread: string;
  question: PausedAnswer & { kind: "user" | "approval" };
}

export interface StoredTask {
  taskId: string;
  /** The run now carrying the task: a restart runs the call again under a new run id. */
  runId: string;
  status: TaskStatus;
  statusMessage: string | null;
  createdAt: number;
  updatedAt: number;
  expiresAt: number;
  /** The ttl the task was created with (ms), as clients are told it. */
  ttlMs: number;
  attempts: number;
  generation: TaskGeneration;
  /** The expert the task calls. */
  expert: string;
  /** Set while the task is `input_required`. */
  input: PendingInput | null;
}

export type TerminalStatus = Exclude<TaskStatus, "working" | "input_required">;

/** A finished task's answer, turned into the tool result by the MCP layer. */
export interface TaskOutcome {
  task: StoredTask;
  result: ExpertCallResult | null;
  structuredExpected: boolean;
}

export const DEFAULT_TASK_TTL_MS = 3_600_000;
export const MAX_TASK_TTL_MS = 86_400_000;

const usageSchema = z.object({
  steps: z.number(),
  inputTokens: z.number(),
  outputTokens: z.number(),
  toolCalls: z.number(),
  refusedToolCalls: z.number(),
  downstreamBytesRead: z.number(),
  bytesReturned: z.number(),
  elapsedMs: z.number(),
  budgetExhausted: z.enum(["steps", "timeout", "tool_calls", "output_tokens"]).nullable(),
  retries: z.number(),
});

const resultSchema = z.object({
  runId: z.string(),
  outcome: z.enum(RUN_OUTCOMES),
  text: z.string(),
  structured: z.record(z.string(), z.json()).optional(),
  thread: z.string().optional(),
  question: z.object({ text: z.string(), expiresAt: z.number() }).optional(),
  usage: usageSchema,
  traceId: z.string().optional(),
});

/** What a restarted session needs to run the call again: the request without its MCP request ref. */
const requestSchema = z.object({
  runId: z.string(),
  skill: z.string(),
  expert: z.string(),
  args: z.record(z.string(), z.unknown()),
  thread: z.string().optional(),
  answer: z.string().optional(),
  // A 2026-07-28 task resumed through tasks/update runs again with the user's decision.
  approve: z.boolean().optional(),
  decidedBy: z.enum(["user", "orchestrator"]).optional(),
  refusal: z.enum(["declined", "cancelled"]).optional(),
  user: userPropsSchema,
});

const pendingInputSchema = z.object({
  key: z.string(),
  thread: z.string(),
  question: z.object({
    kind: z.enum(["user", "approval"]),
    text: z.string(),
    expiresAt: z.number(),
    approvals: z.array(z.object({ name: z.string(), server: z.string(), tool: z.string(), input: z.string() })).optional(),
  }),
});

type TaskRow = {
  task_id: string;
  run_id: string;
  status: string;
  status_message: string | null;
  request: string;
  result: string | null;
  structured_expected: number;
  created_at: number;
  updated_at: number;
  expires_at: number;
  attempts: number;
  generation: string;
  input_request: string | null;
};

/**
 * The session's tasks in its SQLite. The request is kept (arguments as the caller sent them, in
 * the caller's own session, like thread turns) because a task outlives the instance that started
 * it: after a restart the alarm runs it again. Rows go when the task's ttl ends.
 */
export class TaskStore {
  constructor(private readonly sql: SqlStorage) {}

  create(taskId: string, request: ExpertCallRequest, structuredExpected: boolean, ttlMs: number, now: number, generation: TaskGeneration = "v1"): StoredTask {
    const { mcpRequest: _ignored, ...durable } = request;
    this.sql.exec(
      `INSERT INTO tasks (task_id, run_id, status, status_message, request, structured_expected, created_at, updated_at, expires_at, generation)
       VALUES (?, ?, 'working', 'Queued.', ?, ?, ?, ?, ?, ?)`,
      taskId,
      request.runId,
      JSON.stringify(durable),
      structuredExpected ? 1 : 0,
      now,
      now,
      now + ttlMs,
      generation,
    );
    return this.getTask(taskId) as StoredTask;
  }

  getTask(taskId: string): StoredTask | null {
    const row = this.sql.exec<TaskRow>(`SELECT * FROM tasks WHERE task_id = ?`, taskId).toArray()[0];
    return row ? toTask(row) : null;
  }

  outcome(taskId: string): TaskOutcome | null {
    const row = this.sql.exec<TaskRow>(`SELECT * FROM tasks WHERE task_id = ?`, taskId).toArray()[0];
    if (!row) return null;
    const result = row.result === null ? null : resultSchema.safeParse(JSON.parse(row.result));
    return { task: toTask(row), result: result?.success ? (result.data as ExpertCallResult) : null, structuredExpected: row.structured_expected === 1 };
  }

  /** Newest first, `limit` after the task `after` names (a cursor). */
  list(limit: number, after?: string): StoredTask[] {
    const cursor =
      after === undefined ? undefined : this.sql.exec<{ created_at: number }>(`SELECT created_at FROM tasks WHERE task_id = ?`, after).toArray()[0];
    const rows =
      cursor === undefined
        ? this.sql.exec<TaskRow>(`SELECT * FROM tasks ORDER BY created_at DESC, task_id DESC LIMIT ?`, limit)
        : this.sql.exec<TaskRow>(
            `SELECT * FROM tasks WHERE created_at < ? OR (created_at = ? AND task_id < ?) ORDER BY created_at DESC, task_id DESC LIMIT ?`,
            cursor.created_at,
            cursor.created_at,
            after,
            limit,
          );
    return rows.toArray().map(toTask);
  }

  /** Working tasks with their requests. */
  working(): Array<{ task: StoredTask; request: ExpertCallRequest }> {
    return this.sql
      .exec<TaskRow>(`SELECT * FROM tasks WHERE status = 'working'`)
      .toArray()
      .flatMap((row) => {
        const request = requestSchema.safeParse(JSON.parse(row.request));
        return request.success ? [{ task: toTask(row), request: request.data }] : [];
      });
  }

  /** The call runs under `runId`; false when the task no longer works (cancelled first). */
  attempt(taskId: string, runId: string, now: number): boolean {
    const row = this.sql.exec<{ attempts: number }>(`SELECT attempts FROM tasks WHERE task_id = ? AND status = 'working'`, taskId).toArray()[0];
    if (!row) return false;
    this.sql.exec(`UPDATE tasks SET run_id = ?, attempts = attempts + 1, status_message = 'Running.', updated_at = ? WHERE task_id = ?`, runId, now, taskId);
    return true;
  }

  /** The run paused for its user: the task waits in `input_required` until tasks/update answers. */
  awaitInput(taskId: string, input: PendingInput, message: string, now: number): boolean {
    return (
      this.sql.exec(
        `UPDATE tasks SET status = 'input_required', status_message = ?, input_request = ?, updated_at = ? WHERE task_id = ? AND status = 'working'`,
        message,
        JSON.stringify(input),
        now,
        taskId,
      ).rowsWritten > 0
    );
  }

  /**
   * The user answered: the task works again, on `request` (the call resumed with the decision),
   * which replaces the stored one so a restart reruns the resumed call, not the first one.
   * False when the task no longer waits for the input keyed `key` (answered already, cancelled).
   */
  resume(taskId: string, key: string, request: ExpertCallRequest, now: number): boolean {
    const { mcpRequest: _ignored, ...durable } = request;
    return (
      this.sql.exec(
        `UPDATE tasks SET status = 'working', status_message = 'Resumed with the user''s reply.', input_request = NULL, request = ?,
           run_id = ?, attempts = 0, updated_at = ?
         WHERE task_id = ? AND status = 'input_required' AND json_extract(input_request, '$.key') = ?`,
        JSON.stringify(durable),
        request.runId,
        now,
        taskId,
        key,
      ).rowsWritten > 0
    );
  }

  /** The request the task runs (or last ran). */
  request(taskId: string): ExpertCallRequest | null {
    const row = this.sql.exec<{ request: string }>(`SELECT request FROM tasks WHERE task_id = ?`, taskId).toArray()[0];
    const request = row ? requestSchema.safeParse(JSON.parse(row.request)) : undefined;
    return request?.success ? request.data : null;
  }

  progress(taskId: string, message: string, now: number): void {
    this.sql.exec(`UPDATE tasks SET status_message = ?, updated_at = ? WHERE task_id = ? AND status = 'working'`, message, now, taskId);
  }

  /** Ends a working (or waiting) task; a task already ended (a cancel that won the race) keeps its status. */
  end(taskId: string, status: TerminalStatus, message: string | null, result: ExpertCallResult | null, now: number): boolean {
    return (
      this.sql.exec(
        `UPDATE tasks SET status = ?, status_message = ?, result = ?, input_request = NULL, updated_at = ?
         WHERE task_id = ? AND status IN ('working', 'input_required')`,
        status,
        message,
        result === null ? null : JSON.stringify(result),
        now,
        taskId,
      ).rowsWritten > 0
    );
  }

  /** Stores the result of a run a cancel already ended, so tasks/result still has the run's record. */
  attachResult(taskId: string, result: ExpertCallResult): void {
    this.sql.exec(`UPDATE tasks SET result = ? WHERE task_id = ? AND result IS NULL`, JSON.stringify(result), taskId);
  }

  purgeExpired(now: number): number {
    // A task waiting for its user goes at its ttl like an ended one (nothing runs for it).
    return this.sql.exec(`DELETE FROM tasks WHERE expires_at <= ? AND status <> 'working'`, now).rowsWritten;
  }

  /** When the task part of the alarm is next due: at once for work to (re)start, else the first expiry. */
  nextDue(now: number, inFlight: ReadonlySet<string>): number | null {
    const working = this.sql.exec<{ task_id: string }>(`SELECT task_id FROM tasks WHERE status = 'working'`).toArray();
    if (working.some((row) => !inFlight.has(row.task_id))) return now;
    // A heartbeat while tasks run here: if this instance dies, the alarm starts them again.
    if (working.length > 0) return now + HEARTBEAT_MS;
    const expiry = this.sql.exec<{ at: number | null }>(`SELECT MIN(expires_at) AS at FROM tasks`).one().at;
    return expiry === null ? null : Math.max(expiry, now);
  }
}

/** How long after a running task's last alarm the next one checks on it. */
export const HEARTBEAT_MS = 60_000;

function toTask(row: TaskRow): StoredTask {
  return {
    taskId: row.task_id,
    runId: row.run_id,
    status: row.status as TaskStatus,
    statusMessage: row.status_message,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    expiresAt: row.expires_at,
    ttlMs: row.expires_at - row.created_at,
    attempts: row.attempts,
    generation: row.generation === "v2" ? "v2" : "v1",
    expert: String((JSON.parse(row.request) as { expert?: unknown }).expert ?? ""),
    input: parsePendingInput(row.input_request),
  };
}

function parsePendingInput(json: string | null): PendingInput | null {
  if (json === null) return null;
  const parsed = pendingInputSchema.safeParse(JSON.parse(json));
  return parsed.success ? parsed.data : null;
}
