import { SlipsnisseError } from "../errors";
import { jsonDepthMessage } from "../untrusted/json-depth";

/** A programming error: an MCP server was requested on a path that did not go through serveMcp. */
export class UnissuedRequestPropsError extends SlipsnisseError {
  readonly kind = "unissued-request-props";
  readonly fix = "Route MCP requests through serveMcp, which attaches the validated user and skill.";
  constructor() {
    super("An MCP server was requested without the props serveMcp issues; none was built.");
  }
}

/**
 * Tool arguments larger than the expert's `budget.max_input_bytes`. They would be sent whole to
 * the model on every step and kept in the thread, so they are refused before the session is
 * reached: no run, no model call, no stored turn.
 */
export class ExpertInputTooLargeError extends SlipsnisseError {
  readonly kind = "expert-input-too-large";
  readonly fix: string;
  constructor(
    readonly expert: string,
    readonly bytes: number,
    readonly limit: number,
  ) {
    super(
      `Expert "${expert}" refused its arguments: they are ${bytes} bytes of JSON, over its limit of ${limit} bytes (budget.max_input_bytes). Nothing was sent to the model.`,
    );
    this.fix = `Send a shorter request: pass references the expert's tools can look up (URLs, ids, paths) instead of whole documents, or raise budget.max_input_bytes of expert "${expert}" in the catalog.`;
  }
}

/**
 * A JSON-RPC message nested past MAX_JSON_DEPTH, refused before it is parsed for the MCP
 * handler: the SDK's schemas, the session's structured clone and JSON.stringify all recurse, so
 * a deep enough message overflowed the stack inside the session (issue 18). -32602 for a request
 * (its params are where the nesting is), -32600 for anything else.
 */
export class McpMessageTooDeepError extends SlipsnisseError {
  readonly kind = "mcp-message-too-deep";
  readonly fix = "Send flatter arguments.";
  constructor(
    readonly depth: number,
    readonly limit: number,
    readonly code: -32602 | -32600,
  ) {
    super(jsonDepthMessage(code === -32602 ? "The request's params" : "The message", limit));
  }
}

/** A request parameter the MCP SDK would answer badly (a 500, a schema dump), refused first with -32602. */
export class McpParamsRefusedError extends SlipsnisseError {
  readonly kind = "mcp-params-refused";
  readonly fix = "Correct the parameter and send the request again.";
  constructor(
    readonly method: string,
    readonly param: string,
    readonly detail: string,
  ) {
    super(`${method}: params.${param} ${detail}.`);
  }
}

/** A programming error: the run view's own style or script holds text that would end its element early (run-app-html.ts). */
export class UnsafeRunViewTextError extends SlipsnisseError {
  readonly kind = "unsafe-run-view-text";
  readonly fix = "Keep `</style`, `</script` and `<!--` out of the run view's style and script (write `<\\/` in a script's strings).";
  constructor(
    readonly element: "style" | "script",
    readonly found: string,
  ) {
    super(`The run view's <${element}> text contains "${found}", which the HTML parser would read as the element's end or a comment.`);
  }
}
