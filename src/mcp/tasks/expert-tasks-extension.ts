import { replyTo } from "./json-rpc-answer";
import { hasTaskClientCapabilityV2, InputResponsesV2Schema } from "@modelcontextprotocol/ext-tasks/core/v2";
import { SERVER_INFO_META_KEY, type JSONRPCRequest } from "@modelcontextprotocol/server";
import { z } from "zod";
import type { ExpertConfig } from "../../catalog/catalog-schema";
import { sessionStub } from "../../experts/session/session-name";
import type { TaskInputReply } from "../../experts/protocol/session-tasks";
import { DEFAULT_TASK_TTL_MS, type StoredTask } from "../../experts/protocol/task-store";
import { log } from "../../observability/logger";
import { SERVER_INFO } from "../server/expert-mcp-server";
import { TASK_POLL_INTERVAL_MS, validatedTaskCall, wireTaskFields, type TaskContext } from "./expert-tasks";
import { toToolResult } from "../delivery/expert-tool-result";
import { RoutingHeaderMismatchError, TaskNotFoundError, TaskParamsInvalidError, TaskRequestError, TasksExtensionNotDeclaredError } from "./task-errors";
import { decisionOf, elicitationFor, replyOf } from "../delivery/user-input";

const METHODS = new Set(["tools/call", "tasks/get", "tasks/update", "tasks/cancel"]);
const taskIdSchema = z.looseObject({ taskId: z.string().min(1).max(100) });
const updateSchema = z.looseObject({ taskId: z.string().min(1).max(100), inputResponses: InputResponsesV2Schema });
const callSchema = z.looseObject({ name: z.string(), arguments: z.record(z.string(), z.unknown()).optional() });

/**
 * The 2026-07-28 Tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663) for expert calls:
 * a `tools/call` of an expert configured for tasks, from a request whose client capabilities
 * declare the extension, answers `resultType: "task"` at once and runs in the caller's session
 * (session-tasks.ts, the same durable tasks as 2025-11-25's); `tasks/get` inlines the result,
 * `tasks/update` carries the user's reply to a task waiting in `input_required` (an approval or
 * an ask_user question), `tasks/cancel` acknowledges. The SDK's McpServer serves none of it (its
 * tools/call result check refuses a task, and it knows no tasks/* method in this era), so these
 * requests are answered here, before the SDK, once the SDK's own classifier has accepted the
 * request's per-request envelope (inbound-post.ts; a malformed `_meta` is the SDK's -32602). `tasks/list` and `tasks/result`, which the extension removed,
 * are left to the SDK (-32601), like every other message (null).
 */
export async function serveTasksExtension(request: Request, message: JSONRPCRequest, context: TaskContext): Promise<Response | null> {
  if (!METHODS.has(message.method)) return null;
  try {
    const result = await answer(request, message, context);
    return result === null ? null : replyTo(message, { result: { ...result, _meta: { [SERVER_INFO_META_KEY]: SERVER_INFO } } });
  } catch (error) {
    if (error instanceof TaskRequestError) {
      const data = error.data === undefined ? {} : { data: error.data };
      return replyTo(message, { error: { code: error.code, message: error.toolMessage, ...data } }, error.httpStatus);
    }
    log("error", "tasks extension request failed", { method: message.method, error: String(error) });
    return replyTo(message, { error: { code: -32603, message: "The task request failed in its session; try again." } });
  }
}

async function answer(request: Request, message: JSONRPCRequest, { env, skill, user }: TaskContext): Promise<Record<string, unknown> | null> {
  const declared = hasTaskClientCapabilityV2(message.params);
  if (message.method === "tools/call") {
    const params = callSchema.safeParse(message.params);
    if (!params.success) return null;
    const expert = skill.config.experts.find((candidate) => candidate.name === params.data.name);
    // An unknown tool, a tool that never runs as a task, and a retry carrying a user's reply to
    // an input_required answer (SEP-2322, resumed by the SDK's handler) are the SDK's to serve.
    if (!expert || expert.task === "forbidden" || "requestState" in params.data || "inputResponses" in params.data) return null;
    if (!declared) {
      if (expert.task === "required") throw new TasksExtensionNotDeclaredError(`tools/call of "${expert.name}"`);
      return null;
    }
    checkRoutingHeaders(request, message.method, expert.name);
    return { resultType: "task", ...(await createTask(expert, params.data.arguments ?? {}, { env, skill, user }, params.data._meta)) };
  }
  if (!declared) throw new TasksExtensionNotDeclaredError(message.method);
  const { taskId } = parse(taskIdSchema, message.params);
  checkRoutingHeaders(request, message.method, taskId);
  const session = sessionStub(env, skill.name, user.userId);
  // Another user's task id reaches this user's session, which has no such task: not found.
  const task = await session.task(taskId);
  if (task?.generation !== "v2") throw new TaskNotFoundError(taskId);
  switch (message.method) {
    case "tasks/get":
      return { resultType: "complete", ...(await detailedTask(task, { env, skill, user })) };
    case "tasks/update": {
      const { inputResponses } = parse(updateSchema, message.params);
      const waiting = task.status === "input_required" ? task.input : null;
      const response = waiting ? inputResponses[waiting.key] : undefined;
      // Responses to keys the task no longer waits for are acknowledged and ignored (SEP-2663).
      if (waiting && response !== undefined) {
        const expert = skill.config.experts.find((candidate) => candidate.name === task.expert);
        const elicited = "action" in response ? replyOf(response as Parameters<typeof replyOf>[0]) : ({ action: "failed" } as const);
        const decision: TaskInputReply = decisionOf(waiting.question.kind, elicited, expert?.user_input_timeout_ms ?? 0);
        await session.answerTask(taskId, waiting.key, decision);
      }
      return { resultType: "complete" };
    }
    case "tasks/cancel":
      // Idempotent on an ended task: the extension keeps -32602 for unknown task ids only.
      if (task.status === "working" || task.status === "input_required") await session.cancelTask(taskId);
      return { resultType: "complete" };
    default:
      return null;
  }
}

/** SEP-2243 / SEP-2663 routing headers: `Mcp-Method` mirrors the method, `Mcp-Name` the tool name or task id. */
function checkRoutingHeaders(request: Request, method: string, name: string): void {
  if (request.headers.get("mcp-method") !== method) throw new RoutingHeaderMismatchError("Mcp-Method", method);
  if (request.headers.get("mcp-name") !== name) throw new RoutingHeaderMismatchError("Mcp-Name", name);
}

async function createTask(expert: ExpertConfig, rawArgs: Record<string, unknown>, context: TaskContext, meta: unknown): Promise<Record<string, unknown>> {
  const call = await validatedTaskCall(expert, rawArgs, context, meta);
  const task = await sessionStub(context.env, context.skill.name, context.user.userId).startTask(
    crypto.randomUUID(),
    call,
    expert.output_schema !== undefined,
    DEFAULT_TASK_TTL_MS,
    "v2",
  );
  return wireTaskV2(task);
}

/** The extension's Task: `ttlMs` and `pollIntervalMs` in integer milliseconds, no `requestState`. */
function wireTaskV2(task: StoredTask): Record<string, unknown> {
  return { ...wireTaskFields(task), ttlMs: task.ttlMs, pollIntervalMs: TASK_POLL_INTERVAL_MS };
}

/** A DetailedTask: the result inlined once completed, the error once failed, the input requests while waiting. */
export async function detailedTask(task: StoredTask, { env, skill, user }: TaskContext): Promise<Record<string, unknown>> {
  const wire = wireTaskV2(task);
  if (task.status === "input_required" && task.input) {
    return { ...wire, inputRequests: { [task.input.key]: { method: "elicitation/create", params: { mode: "form", ...elicitationFor(task.input.question) } } } };
  }
  if (task.status !== "completed" && task.status !== "failed") return wire;
  const outcome = await sessionStub(env, skill.name, user.userId).taskOutcome(task.taskId, 0);
  if (task.status === "completed" && outcome?.result) {
    return { ...wire, result: { resultType: "complete", ...toToolResult(outcome.result, outcome.structuredExpected) } };
  }
  return { ...wire, status: "failed", error: { code: -32603, message: task.statusMessage ?? "The task failed in its session." } };
}

function parse<T>(schema: z.ZodType<T>, params: unknown): T {
  const parsed = schema.safeParse(params);
  if (!parsed.success) throw new TaskParamsInvalidError(`Invalid params: ${z.prettifyError(parsed.error)}`);
  return parsed.data;
}
