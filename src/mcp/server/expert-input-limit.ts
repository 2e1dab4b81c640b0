import type { ExpertConfig } from "../../catalog/catalog-schema";
import { utf8Bytes } from "../../downstream/tool-result-text";
import { ExpertInputTooLargeError } from "../mcp-errors";

/** The refusal when `args` (without the thread handle) exceed the expert's limit, else null. */
export function inputOverLimit(expert: ExpertConfig, args: Record<string, unknown>): ExpertInputTooLargeError | null {
  const limit = expert.budget.max_input_bytes;
  const bytes = utf8Bytes(JSON.stringify(args));
  return bytes > limit ? new ExpertInputTooLargeError(expert.name, bytes, limit) : null;
}
