import type { ExpertConfig } from "../catalog/catalog-schema";
import { utf8Bytes } from "../downstream/tool-result-text";
import { SlipsnisseError } from "../errors";

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
    super(`Expert "${expert}" refused its arguments: they are ${bytes} bytes of JSON, over its limit of ${limit} bytes (budget.max_input_bytes). Nothing was sent to the model.`);
    this.fix = `Send a shorter request: pass references the expert's tools can look up (URLs, ids, paths) instead of whole documents, or raise budget.max_input_bytes of expert "${expert}" in the catalog.`;
  }
}

/** The refusal when `args` (without the thread handle) exceed the expert's limit, else null. */
export function inputOverLimit(expert: ExpertConfig, args: Record<string, unknown>): ExpertInputTooLargeError | null {
  const limit = expert.budget.max_input_bytes;
  const bytes = utf8Bytes(JSON.stringify(args));
  return bytes > limit ? new ExpertInputTooLargeError(expert.name, bytes, limit) : null;
}
