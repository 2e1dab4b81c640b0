import type { CallToolResult } from "@modelcontextprotocol/server";
import type { ExpertCallResult } from "../experts/expert-call";

/** `_meta` keys use a reverse-DNS-style prefix (MCP _meta naming rules); clients ignore unknown ones. */
export const META_USAGE = "slipsnisse.dev/usage";
export const META_THREAD = "slipsnisse.dev/thread";
export const META_RUN = "slipsnisse.dev/run";
export const META_OUTCOME = "slipsnisse.dev/outcome";

/**
 * Only the final answer reaches the orchestrator's context; steps stay in the run record. The
 * thread handle is repeated in the text because many orchestrators show the model only `content`.
 */
export function toToolResult(result: ExpertCallResult): CallToolResult {
  const meta = {
    [META_USAGE]: result.usage,
    [META_THREAD]: result.thread,
    [META_RUN]: result.runId,
    [META_OUTCOME]: result.outcome,
  };
  if (result.outcome === "error") {
    return { isError: true, content: [{ type: "text", text: result.text }], _meta: meta };
  }
  const trailer = result.thread ? `\n\n(thread: ${result.thread} — pass it as "thread" to ask a follow-up)` : "";
  return { content: [{ type: "text", text: `${result.text}${trailer}` }], _meta: meta };
}
