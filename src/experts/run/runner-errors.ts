import { SlipsnisseError } from "../../errors";

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

/** A code-mode expert on a Worker without the `worker_loaders` binding its scripts run in. */
export class CodeModeUnavailableError extends SlipsnisseError {
  readonly kind = "code-mode-unavailable";
  readonly fix =
    'An admin adds `[[worker_loaders]]` with `binding = "LOADER"` to the Worker\'s wrangler.toml and deploys again, or sets the expert\'s `mode` to "synthesize".';
  constructor(readonly expert: string) {
    super(`Expert "${expert}" runs in code mode, but this deployment has no sandbox (no worker_loaders binding) to run its scripts in.`);
  }
}
