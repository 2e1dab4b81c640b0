import { SlipsnisseError } from "../errors";

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
