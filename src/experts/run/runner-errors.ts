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
    super(
      `Expert "${expert}" has none of its tools: listing failed on ${names} (${servers.map((s) => s.reason).join("; ")}).`,
    );
    this.fix = `Check that ${names} ${servers.length === 1 ? "is" : "are"} running and reachable (an admin sees each server's state with GET /admin/api/skills/${skill ?? "<skill>"}/health), then try again.`;
  }
}

/** The model kept sending tool arguments that do not parse or match the tool's schema. */
export class MalformedToolArgumentsError extends SlipsnisseError {
  readonly kind = "malformed-tool-arguments";
  readonly fix = "Try again, rephrase the request, or give the expert a model that is better at tool calling.";
  constructor(
    readonly expert: string,
    readonly attempts: number,
    readonly tools: readonly string[],
  ) {
    super(`Expert "${expert}" stopped: its model sent malformed arguments ${attempts} times (${tools.join(", ")}).`);
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

/** A route expert's model made no call to any of the expert's tools, so there is nothing to return. */
export class RouteWithoutToolCallError extends SlipsnisseError {
  readonly kind = "route-without-tool-call";
  readonly fix = "Rephrase the request so it clearly matches one of the expert's tools, or give the expert a model that is better at tool calling.";
  constructor(
    readonly expert: string,
    /** What the model emitted instead: unknown or malformed calls, by name. */
    readonly emitted: readonly string[],
  ) {
    const detail =
      emitted.length === 0
        ? "its model did not call any tool"
        : `its model called only ${emitted.map((name) => `"${name}"`).join(", ")}, which ${emitted.length === 1 ? "is" : "are"} not among its tools or had malformed arguments`;
    super(`Expert "${expert}" (route mode) returned no result: ${detail}.`);
  }
}

/** An expert with an `output_schema` ended without a final answer that matches it. */
export class OutputSchemaMismatchError extends SlipsnisseError {
  readonly kind = "output-schema-mismatch";
  readonly fix = "Try again; if it keeps failing, give the expert a model that follows JSON instructions better, or loosen its output_schema.";
  constructor(
    readonly expert: string,
    readonly problem: string,
  ) {
    super(`Expert "${expert}" returned no structured result: ${problem}.`);
  }
}

/** The expert named in a call is not in the skill's live catalog. */
export class UnknownExpertError extends SlipsnisseError {
  readonly kind = "unknown-expert";
  readonly fix = "List the tools again: the catalog may have changed since the client last did.";
  constructor(readonly skill: string, readonly expert: string) {
    super(`Skill "${skill}" has no expert named "${expert}".`);
  }
}

/** A `thread` handle this user's session never minted (or another user's). */
export class UnknownThreadError extends SlipsnisseError {
  readonly kind = "unknown-thread";
  readonly fix = "Call the expert without `thread` to start a new conversation.";
  constructor(readonly threadId: string) {
    super(`Thread ${threadId} does not exist for this user and skill (threads are private to the user who started them).`);
  }
}

/** A `thread` handle of this user's, but started by another expert of the skill. */
export class ThreadOfAnotherExpertError extends SlipsnisseError {
  readonly kind = "thread-of-another-expert";
  readonly fix: string;
  constructor(readonly threadId: string, readonly owner: string, readonly expert: string) {
    super(`Thread ${threadId} belongs to expert "${owner}", not "${expert}" (a thread continues only with the expert that started it).`);
    this.fix = `Call "${owner}" with this thread, or call "${expert}" without \`thread\` to start a new conversation.`;
  }
}
