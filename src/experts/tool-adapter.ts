import { dynamicTool } from "ai";
import type { Tool } from "ai";
import type { DownstreamTool, ToolSource } from "../downstream/downstream-types";
import { toolResultText } from "../downstream/tool-result-text";
import { raceWithSignal } from "./abort";
import { truncateUtf8 } from "./result-truncation";
import type { RunBudget } from "./run-budget";
import type { RunRecorder } from "./run-recorder";
import { DownstreamToolReportedError, ToolCallBudgetSpentError } from "./runner-errors";
import { toolInputSchema } from "./tool-input-schema";

export interface ToolAdapterContext {
  source: ToolSource;
  budget: RunBudget;
  recorder: RunRecorder;
}

/**
 * One whitelisted downstream tool as an AI SDK tool. Its execute counts against max_tool_calls
 * (refusing past it), passes the run's signal downstream, flattens and truncates the result, and
 * records the call. Failures become tool errors the model reads; an abort propagates.
 */
export function downstreamTool(ctx: ToolAdapterContext, serverId: string, tool: DownstreamTool, exposedName: string): Tool {
  const maxBytes = ctx.budget.limits.max_tool_result_bytes;
  return dynamicTool({
    description: tool.description ?? `${tool.name} (from ${serverId})`,
    inputSchema: toolInputSchema(tool.inputSchema),
    execute: async (input, { toolCallId, abortSignal }) => {
      if (!ctx.budget.tryStartToolCall()) {
        ctx.recorder.recordCall({ toolCallId, name: exposedName, status: "refused", bytes: 0, elapsedMs: 0, error: "tool-call budget spent" });
        throw new ToolCallBudgetSpentError(exposedName, ctx.budget.limits.max_tool_calls);
      }
      const started = Date.now();
      const elapsed = () => Date.now() - started;
      const call = ctx.source.callTool(serverId, tool.name, asArguments(input), abortSignal ? { signal: abortSignal } : {});
      const result = await raceWithSignal(call, abortSignal).catch((error: unknown) => {
        const message = error instanceof Error ? error.message : String(error);
        ctx.recorder.recordCall({ toolCallId, name: exposedName, status: "error", bytes: 0, elapsedMs: elapsed(), error: message });
        throw error;
      });
      const flat = toolResultText(result);
      const cut = truncateUtf8(flat.text, maxBytes);
      ctx.recorder.downstreamBytesRead += cut.totalBytes;
      if (flat.isError) {
        ctx.recorder.recordCall({ toolCallId, name: exposedName, status: "error", bytes: cut.totalBytes, elapsedMs: elapsed(), error: "the tool reported an error" });
        throw new DownstreamToolReportedError(exposedName, cut.text);
      }
      const status = cut.truncated ? "truncated" : "ok";
      ctx.recorder.recordCall({ toolCallId, name: exposedName, status, bytes: cut.totalBytes, elapsedMs: elapsed() }, cut.text);
      return cut.text;
    },
  });
}

function asArguments(input: unknown): Record<string, unknown> {
  if (typeof input !== "object" || input === null || Array.isArray(input)) return {};
  return Object.fromEntries(Object.entries(input));
}
