import { SlipsnisseError } from "../errors";

/** A programming error: an MCP server was requested on a path that did not go through serveMcp. */
export class UnissuedRequestPropsError extends SlipsnisseError {
  readonly kind = "unissued-request-props";
  readonly fix = "Route MCP requests through serveMcp, which attaches the validated user and skill.";
  constructor() {
    super("An MCP server was requested without the props serveMcp issues; none was built.");
  }
}
