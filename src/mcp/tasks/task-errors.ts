import { SlipsnisseError } from "../../errors";

/**
 * Refusals of MCP Tasks requests (2025-11-25 "Tasks"), answered as JSON-RPC errors with the code
 * the spec gives each: -32602 for a task that is not there or already ended, -32601 for a tool
 * whose `execution.taskSupport` does not allow the call as it was made.
 */
export abstract class TaskRequestError extends SlipsnisseError {
  abstract readonly code: number;
  /** The HTTP status the answer goes with: 200 unless the spec names another. */
  readonly httpStatus: number = 200;
  /** The JSON-RPC error's `data`, where the spec defines one. */
  readonly data: Record<string, unknown> | undefined = undefined;
}

/** Also the answer for another user's task id: each session holds only its user's tasks. */
export class TaskNotFoundError extends TaskRequestError {
  readonly kind = "task-not-found";
  readonly code = -32602;
  readonly fix = "Use a taskId this server returned to you for this skill; tasks are dropped when their ttl ends.";
  constructor(readonly taskId: string) {
    super(`Task not found: ${taskId}.`);
  }
}

export class TaskAlreadyEndedError extends TaskRequestError {
  readonly kind = "task-already-ended";
  readonly code = -32602;
  readonly fix = "Nothing to cancel; fetch its result with tasks/result.";
  constructor(
    readonly taskId: string,
    readonly status: string,
  ) {
    super(`Cannot cancel task ${taskId}: it is already ${status}.`);
  }
}

export class TaskWithoutResultError extends TaskRequestError {
  readonly kind = "task-without-result";
  readonly code = -32602;
  readonly fix = "The task ended before its run produced an answer; call the tool again.";
  constructor(
    readonly taskId: string,
    readonly status: string,
  ) {
    super(`Task ${taskId} ended ${status} without a result.`);
  }
}

export class TaskStillWorkingError extends TaskRequestError {
  readonly kind = "task-still-working";
  readonly code = -32603;
  readonly fix = "Poll tasks/get until the task has ended, then ask for its result again.";
  constructor(readonly taskId: string) {
    super(`Task ${taskId} is still working after the longest this request waits.`);
  }
}

export class TaskNotSupportedError extends TaskRequestError {
  readonly kind = "task-not-supported";
  readonly code = -32601;
  readonly fix = "Call the tool without `task`, or set `task: optional` on the expert in the catalog.";
  constructor(readonly expert: string) {
    super(`Expert "${expert}" does not run as a task (its execution.taskSupport is forbidden).`);
  }
}

export class TaskRequiredError extends TaskRequestError {
  readonly kind = "task-required";
  readonly code = -32601;
  readonly fix = "Call it as a task (tools/call with `task`), with a client that supports MCP Tasks.";
  constructor(readonly expert: string) {
    super(`Expert "${expert}" runs only as a task (its execution.taskSupport is required).`);
  }
}

/** Malformed params of a task request, or arguments the expert refuses: no task was created. */
export class TaskParamsInvalidError extends TaskRequestError {
  readonly kind = "task-params-invalid";
  readonly code = -32602;
  readonly fix = "Fix the request as the message says and send it again.";
  constructor(readonly detail: string) {
    super(detail);
  }
}

/**
 * A 2026-07-28 request that needs the Tasks extension from a client that did not declare it in
 * the request's `_meta` client capabilities (SEP-2575 "Missing Required Client Capabilities",
 * SEP-2663): -32021 with HTTP 400, naming the capability in `data.requiredCapabilities`.
 */
export class TasksExtensionNotDeclaredError extends TaskRequestError {
  readonly kind = "tasks-extension-not-declared";
  readonly code = -32021;
  override readonly httpStatus = 400;
  override readonly data = { requiredCapabilities: { extensions: { "io.modelcontextprotocol/tasks": {} } } };
  readonly fix = "Declare the io.modelcontextprotocol/tasks extension in the request's client capabilities, or call a tool that does not need a task.";
  constructor(readonly method: string) {
    super(`${method} needs the io.modelcontextprotocol/tasks extension, which this request's client capabilities do not declare.`);
  }
}

/** SEP-2243: a 2026-07-28 request's `Mcp-Method` / `Mcp-Name` header missing or not matching its body (-32020, HTTP 400). */
export class RoutingHeaderMismatchError extends TaskRequestError {
  readonly kind = "routing-header-mismatch";
  readonly code = -32020;
  override readonly httpStatus = 400;
  readonly fix = "Send the Mcp-Method header with the request's method and Mcp-Name with its taskId (tasks/*) or tool name (tools/call).";
  constructor(
    readonly header: string,
    readonly expected: string,
  ) {
    super(`The ${header} header must be "${expected.slice(0, 100)}" for this request.`);
  }
}
