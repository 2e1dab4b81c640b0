import { callerTraceOfMeta } from "../../downstream/trace-context";
import type { CallToolResult } from "@modelcontextprotocol/server";
import { z } from "zod";
import type { UserProps } from "../../auth/user-props";
import type { CompiledSkill } from "../../catalog/compiled-skill-cache";
import type { ExpertConfig } from "../../catalog/catalog-schema";
import type { ExpertCallRequest } from "../../experts/core/call-types";
import { sessionStub } from "../../experts/session/session-name";
import { DEFAULT_TASK_TTL_MS, MAX_TASK_TTL_MS, type StoredTask } from "../../experts/protocol/task-store";
import { log } from "../../observability/logger";
import { prepareExpertCall } from "../server/expert-call-checks";
import { compiledInputSchema } from "../server/expert-mcp-server";
import { toToolResult } from "../delivery/expert-tool-result";
import { splitThread } from "../server/expert-tool-schema";
import {
  TaskAlreadyEndedError,
  TaskNotFoundError,
  TaskNotSupportedError,
  TaskParamsInvalidError,
  TaskRequestError,
  TaskRequiredError,
  TaskStillWorkingError,
  TaskWithoutResultError,
} from "./task-errors";

/** The spec's `_meta` key tying a result to its task. */
export const RELATED_TASK = "io.modelcontextprotocol/related-task";
/** What a client is told to wait between polls: a model step takes seconds. */
export const TASK_POLL_INTERVAL_MS = 1_000;
const LIST_PAGE = 50;
/** tasks/result waits for a working task in rounds of up to this long, for at most RESULT_WAIT_TOTAL_MS. */
const RESULT_WAIT_MS = 30_000;
const RESULT_WAIT_TOTAL_MS = 600_000;
const RESULT_ROUNDS = 1_000;

/** A JSON-RPC response to a Tasks request, as answerTaskMessage builds it. */
export type TaskAnswer =
  | { jsonrpc: "2.0"; id: string | number; result: Record<string, unknown> }
  | { jsonrpc: "2.0"; id: string | number; error: { code: number; message: string } };

export interface TaskContext {
  env: Env;
  skill: CompiledSkill;
  user: UserProps;
}

const messageSchema = z.object({
  jsonrpc: z.literal("2.0"),
  id: z.union([z.string(), z.number()]),
  method: z.string(),
  params: z.record(z.string(), z.unknown()).optional(),
});
type Message = z.infer<typeof messageSchema>;

const callParamsSchema = z.object({
  name: z.string(),
  arguments: z.record(z.string(), z.unknown()).optional(),
  task: z
    .object({ ttl: z.number().int().min(0).optional() })
    .loose()
    .optional(),
});
const taskIdSchema = z.object({ taskId: z.string().min(1).max(100) });
const listParamsSchema = z.object({ cursor: z.string().max(100).optional() });

/**
 * MCP Tasks (protocol revision 2025-11-25) for expert calls: `tools/call` with `task`,
 * `tasks/get`, `tasks/result`, `tasks/list` and `tasks/cancel`. The SDK's McpServer serves no
 * tasks (a tools/call handler cannot return a CreateTaskResult: its result check refuses one),
 * so these requests are answered before the SDK, as plain JSON-RPC responses: Streamable HTTP
 * as the POST's body (mcp-endpoint.ts, for a ClientProfile with core Tasks), a legacy SSE
 * connection on its stream (legacy-sse-session.ts). The task runs in the caller's own session
 * (session-tasks.ts), so a task id of another user is not found there.
 *
 * Returns the JSON-RPC response to a Tasks message (`json`, parsed), or null when it is not one
 * (the SDK serves it).
 */
export async function answerTaskMessage(json: unknown, context: TaskContext): Promise<TaskAnswer | null> {
  const message = messageSchema.safeParse(json);
  if (!message.success) return null;
  try {
    const result = await answer(message.data, context);
    return result === null ? null : { jsonrpc: "2.0", id: message.data.id, result };
  } catch (error) {
    if (error instanceof TaskRequestError) {
      return { jsonrpc: "2.0", id: message.data.id, error: { code: error.code, message: error.toolMessage } };
    }
    log("error", "task request failed", { method: message.data.method, error: String(error) });
    return { jsonrpc: "2.0", id: message.data.id, error: { code: -32603, message: "The task request failed in its session; try again." } };
  }
}

/**
 * Whether answerTaskMessage may answer `json`, decided without I/O, so a connection that takes
 * messages in order (legacy SSE) hands everything else to the SDK at once: the Tasks methods, a
 * `tools/call` carrying `task`, and a plain call of an expert that requires one (refused).
 */
export function isTaskMessage(json: unknown, skill: CompiledSkill): boolean {
  const message = messageSchema.safeParse(json);
  if (!message.success) return false;
  const { method, params } = message.data;
  if (method.startsWith("tasks/")) return true;
  if (method !== "tools/call") return false;
  const expert = skill.config.experts.find((candidate) => candidate.name === params?.name);
  return expert !== undefined && (params?.task !== undefined || expert.task === "required");
}

async function answer(message: Message, { env, skill, user }: TaskContext): Promise<Record<string, unknown> | null> {
  const session = () => sessionStub(env, skill.name, user.userId);
  switch (message.method) {
    case "tools/call": {
      const params = parse(callParamsSchema, message.params);
      const expert = skill.config.experts.find((candidate) => candidate.name === params.name);
      // An unknown tool, and a plain call of a tool that allows one, are the SDK's to answer.
      if (!expert) return null;
      if (params.task === undefined) {
        if (expert.task === "required") throw new TaskRequiredError(expert.name);
        return null;
      }
      if (expert.task === "forbidden") throw new TaskNotSupportedError(expert.name);
      return startTask(expert, params.arguments ?? {}, params.task.ttl, { env, skill, user }, message.params?._meta);
    }
    case "tasks/get":
      return wireTask(await found(session().task(parse(taskIdSchema, message.params).taskId), message));
    case "tasks/list": {
      const { cursor } = parse(listParamsSchema, message.params ?? {});
      const tasks = await session().taskList(LIST_PAGE + 1, cursor);
      const page = tasks.slice(0, LIST_PAGE);
      const last = page.at(-1);
      return { tasks: page.map(wireTask), ...(tasks.length > LIST_PAGE && last ? { nextCursor: last.taskId } : {}) };
    }
    case "tasks/cancel": {
      const { taskId } = parse(taskIdSchema, message.params);
      const task = await found(session().task(taskId), message);
      if (task.status !== "working") throw new TaskAlreadyEndedError(taskId, task.status);
      return wireTask(await found(session().cancelTask(taskId), message));
    }
    case "tasks/result":
      return taskResult(parse(taskIdSchema, message.params).taskId, { env, skill, user });
    default:
      return null;
  }
}

async function startTask(expert: ExpertConfig, rawArgs: Record<string, unknown>, ttl: number | undefined, context: TaskContext, meta: unknown) {
  const request = await validatedTaskCall(expert, rawArgs, context, meta);
  const ttlMs = Math.min(ttl ?? DEFAULT_TASK_TTL_MS, MAX_TASK_TTL_MS);
  const task = await sessionStub(context.env, context.skill.name, context.user.userId).startTask(
    crypto.randomUUID(),
    request,
    expert.output_schema !== undefined,
    ttlMs,
  );
  return { task: wireTask(task) };
}

/**
 * A task's call, checked as the SDK checks a plain call's arguments: refused with -32602 before
 * any task exists. The call's `_meta` trace context (SEP-414) makes its run join the caller's trace.
 */
export async function validatedTaskCall(
  expert: ExpertConfig,
  rawArgs: Record<string, unknown>,
  { skill, user }: TaskContext,
  meta?: unknown,
): Promise<ExpertCallRequest> {
  const validated = await compiledInputSchema(expert, skill.config.tool_policy)["~standard"].validate(rawArgs);
  if (validated.issues) {
    const issues = validated.issues.map((issue) => `${issue.path?.map(String).join(".") || "(arguments)"}: ${issue.message}`).join("; ");
    throw new TaskParamsInvalidError(`Invalid arguments for tool ${expert.name}: ${issues}`);
  }
  const prepared = prepareExpertCall(skill.name, expert, splitThread(validated.value, expert));
  if (!prepared.ok) throw new TaskParamsInvalidError(textOf(prepared.refusal));
  const { args, thread, answer, approve } = prepared;
  const callerTrace = callerTraceOfMeta(meta);
  return {
    runId: crypto.randomUUID(),
    ...(callerTrace === undefined ? {} : { callerTrace }),
    skill: skill.name,
    expert: expert.name,
    args,
    user,
    ...(thread ? { thread } : {}),
    ...(answer === undefined ? {} : { answer }),
    ...(approve === undefined ? {} : { approve }),
  };
}

/** The spec's tasks/result blocks until the task ends; this waits in bounded rounds. */
async function taskResult(taskId: string, { env, skill, user }: TaskContext): Promise<CallToolResult> {
  const session = sessionStub(env, skill.name, user.userId);
  const deadline = Date.now() + RESULT_WAIT_TOTAL_MS;
  for (let round = 0; round < RESULT_ROUNDS && Date.now() < deadline; round++) {
    const outcome = await session.taskOutcome(taskId, RESULT_WAIT_MS);
    if (!outcome) throw new TaskNotFoundError(taskId);
    if (outcome.task.status === "working") continue;
    if (!outcome.result) throw new TaskWithoutResultError(taskId, outcome.task.status);
    const result = toToolResult(outcome.result, outcome.structuredExpected);
    return { ...result, _meta: { ...result._meta, [RELATED_TASK]: { taskId } } };
  }
  throw new TaskStillWorkingError(taskId);
}

/** What both Tasks forms (2025-11-25 core, the 2026-07-28 extension) say of a task alike: id, status, ISO times. */
export function wireTaskFields(task: StoredTask): Record<string, unknown> {
  return {
    taskId: task.taskId,
    status: task.status,
    ...(task.statusMessage === null ? {} : { statusMessage: task.statusMessage }),
    createdAt: new Date(task.createdAt).toISOString(),
    lastUpdatedAt: new Date(task.updatedAt).toISOString(),
  };
}

/** A task as the 2025-11-25 schema has it: ttl and poll interval in ms under these names. */
export function wireTask(task: StoredTask): Record<string, unknown> {
  return { ...wireTaskFields(task), ttl: task.ttlMs, pollInterval: TASK_POLL_INTERVAL_MS };
}

async function found(pending: Promise<StoredTask | null>, message: Message): Promise<StoredTask> {
  const task = await pending;
  if (!task) throw new TaskNotFoundError(String(message.params?.taskId ?? "").slice(0, 100));
  return task;
}

function parse<T>(schema: z.ZodType<T>, params: unknown): T {
  const parsed = schema.safeParse(params);
  if (!parsed.success) throw new TaskParamsInvalidError(`Invalid params: ${z.prettifyError(parsed.error)}`);
  return parsed.data;
}

function textOf(result: CallToolResult): string {
  return result.content.map((block) => (block.type === "text" ? block.text : "")).join("");
}
