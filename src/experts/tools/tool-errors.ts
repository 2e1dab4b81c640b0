import { SlipsnisseError } from "../../errors";

/** Every server the expert draws tools from failed to list them, so it has nothing to work with. */
export class ExpertToolsUnavailableError extends SlipsnisseError {
  readonly kind = "expert-tools-unavailable";
  readonly fix: string;
  constructor(
    readonly expert: string,
    readonly servers: ReadonlyArray<{ serverId: string; reason: string }>,
    readonly skill?: string,
  ) {
    const names = servers.map((s) => `"${s.serverId}"`).join(", ");
    super(`Expert "${expert}" has none of its tools: listing failed on ${names} (${servers.map((s) => s.reason).join("; ")}).`);
    this.fix = `Check that ${names} ${servers.length === 1 ? "is" : "are"} running and reachable (an admin sees each server's state with GET /admin/api/skills/${skill ?? "<skill>"}/health), then try again.`;
  }
}

/** Sent to the model (as a tool error) for a call past the run's max_tool_calls. */
export class ToolCallBudgetSpentError extends SlipsnisseError {
  readonly kind = "tool-call-budget-spent";
  readonly fix = "Answer now with what the earlier tool calls returned.";
  constructor(
    readonly toolName: string,
    readonly maxToolCalls: number,
  ) {
    super(`Not executed: ${toolName} exceeds this run's budget of ${maxToolCalls} tool calls.`);
  }
}

/** The downstream tool answered with isError: its own text is what the model needs to see. */
export class DownstreamToolReportedError extends SlipsnisseError {
  readonly kind = "downstream-tool-error";
  readonly fix = "Adjust the arguments or try another tool.";
  constructor(
    readonly toolName: string,
    readonly detail: string,
  ) {
    super(`${toolName} reported an error: ${detail}`);
  }
}

/** Sent to the model (as a tool error) for a call that needed approval and did not get it; the run goes on. */
export class ToolCallDeclinedError extends SlipsnisseError {
  readonly kind = "tool-call-declined";
  readonly fix = "Do not call it again in this run: go on without it, or say in your answer what you could not do.";
  constructor(
    readonly toolName: string,
    readonly reason: string,
  ) {
    super(`Not executed: ${toolName} needed approval and ${reason}.`);
  }
}

/**
 * A route expert's chosen call needs approval, and the client cannot ask its user mid-call: a
 * route run makes one model call and cannot pause for the orchestrator's approval.
 */
export class ApprovalUnavailableError extends SlipsnisseError {
  readonly kind = "approval-unavailable";
  readonly fix =
    "Use an MCP client that supports elicitation (form mode), so the user can approve the call, or ask an admin to give the skill an expert in synthesize mode for it.";
  constructor(readonly toolName: string) {
    super(`${toolName} needs the user's approval, and this client cannot ask the user during the call.`);
  }
}
