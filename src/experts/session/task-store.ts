import { z } from "zod";
import { userPropsSchema } from "../../auth/user-props";
import { RUN_OUTCOMES } from "../run/expert-types";
import type { ExpertCallRequest, ExpertCallResult } from "./expert-call";

/** MCP Tasks statuses (2025-11-25 "Tasks"); `input_required` is never used: ask-back answers in the result. */
export type TaskStatus = "working" | "completed" | "failed" | "cancelled";

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
}

/** A finished task's answer, turned into the tool result by the MCP layer. */
export interface TaskOutcome {
  task: StoredTask;
  result: ExpertCallResult | null;
  structuredExpected: boolean;
}

export const DEFAULT_TASK_TTL_MS = 3_600_000;
export const MAX_TASK_TTL_MS = 86_400_000;
/** A call cut off by restarts this many times ends failed instead of starting again. */
export const MAX_TASK_ATTEMPTS = 3;

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
  user: userPropsSchema,
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
};

/**
 * The session's tasks in its SQLite. The request is kept (arguments as the caller sent them, in
 * the caller's own session, like thread turns) because a task outlives the instance that started
 * it: after a restart the alarm runs it again. Rows go when the task's ttl ends.
 */
export class TaskStore {
  constructor(private readonly sql: SqlStorage) {}

  create(taskId: string, request: ExpertCallRequest, structuredExpected: boolean, ttlMs: number, now: number): StoredTask {
    const { mcpRequest: _ignored, ...durable } = request;
    this.sql.exec(
      `INSERT INTO tasks (task_id, run_id, status, status_message, request, structured_expected, created_at, updated_at, expires_at)
       VALUES (?, ?, 'working', 'Queued.', ?, ?, ?, ?, ?)`,
      taskId,
      request.runId,
      JSON.stringify(durable),
      structuredExpected ? 1 : 0,
      now,
      now,
      now + ttlMs,
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

  /** Working tasks with the request to run them (again). */
  working(): Array<{ task: StoredTask; request: ExpertCallRequest }> {
    return this.sql
      .exec<TaskRow>(`SELECT * FROM tasks WHERE status = 'working'`)
      .toArray()
      .flatMap((row) => {
        const request = requestSchema.safeParse(JSON.parse(row.request));
        return request.success ? [{ task: toTask(row), request: request.data }] : [];
      });
  }

  /** The call runs (again) under `runId`; a task cut off too often fails instead. */
  attempt(taskId: string, runId: string, now: number): boolean {
    const row = this.sql.exec<{ attempts: number }>(`SELECT attempts FROM tasks WHERE task_id = ? AND status = 'working'`, taskId).toArray()[0];
    if (!row) return false;
    if (row.attempts >= MAX_TASK_ATTEMPTS) {
      this.end(taskId, "failed", `The task was interrupted ${row.attempts} times by session restarts and was given up.`, null, now);
      return false;
    }
    this.sql.exec(`UPDATE tasks SET run_id = ?, attempts = attempts + 1, status_message = 'Running.', updated_at = ? WHERE task_id = ?`, runId, now, taskId);
    return true;
  }

  progress(taskId: string, message: string, now: number): void {
    this.sql.exec(`UPDATE tasks SET status_message = ?, updated_at = ? WHERE task_id = ? AND status = 'working'`, message, now, taskId);
  }

  /** Ends a working task; a task already ended (a cancel that won the race) keeps its status. */
  end(taskId: string, status: Exclude<TaskStatus, "working">, message: string | null, result: ExpertCallResult | null, now: number): boolean {
    return (
      this.sql.exec(
        `UPDATE tasks SET status = ?, status_message = ?, result = ?, updated_at = ? WHERE task_id = ? AND status = 'working'`,
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
  };
}
