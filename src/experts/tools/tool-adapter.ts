import { dynamicTool } from "ai";
import type { Tool } from "ai";
import type { DownstreamTool, ToolSource } from "../../downstream/downstream-types";
import { toolResultText } from "../../downstream/tool-result-text";
import { raceWithSignal } from "../core/abort";
import { DownstreamCallAbortedError, DownstreamUnavailableError } from "../../downstream/downstream-errors";
import { ToolWithheldError } from "../../downstream/tool-pin-errors";
import type { ToolCallRecord } from "../core/run-types";
import { truncateUtf8 } from "../core/result-truncation";
import type { RunBudget } from "../core/run-budget";
import type { RunRecorder } from "../core/run-recorder";
import { DownstreamToolReportedError, ToolCallBudgetSpentError } from "./tool-errors";
import { toolInputSchema } from "./tool-input-schema";
import type { ApprovalContext } from "./tool-approval";
import { rawPreview, TRACE_BOUNDS } from "../core/trace-excerpt";

export interface ToolAdapterContext {
  source: ToolSource;
  budget: RunBudget;
  recorder: RunRecorder;
  /** How calls that need approval are put to the user; without it no call is gated (tests of the adapter alone). */
  approval?: ApprovalContext;
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
      const traced = { server: serverId, tool: tool.name, args: traceArguments(input, maxBytes) };
      if (!ctx.budget.tryStartToolCall()) {
        ctx.recorder.recordCall({ toolCallId, name: exposedName, status: "refused", bytes: 0, elapsedMs: 0, error: "tool-call budget spent", ...traced });
        throw new ToolCallBudgetSpentError(exposedName, ctx.budget.limits.max_tool_calls);
      }
      const started = Date.now();
      const elapsed = () => Date.now() - started;
      // Provisional until the call returns: if the run ends first (cancel, clock), this is its record.
      ctx.recorder.recordCall({
        toolCallId,
        name: exposedName,
        status: "cancelled",
        bytes: 0,
        elapsedMs: 0,
        error: "the run ended before the call returned",
        ...traced,
      });
      const call = ctx.source.callTool(serverId, tool.name, asArguments(input), { toolCallId, ...(abortSignal ? { signal: abortSignal } : {}) });
      const result = await raceWithSignal(call, abortSignal).catch((error: unknown) => {
        const message = error instanceof Error ? error.message : String(error);
        const status = failedCallStatus(error, abortSignal);
        ctx.recorder.recordCall({ toolCallId, name: exposedName, status, bytes: 0, elapsedMs: elapsed(), error: message, ...traced });
        // The model may still answer (from other tools, or quoting the failure): the result's `_meta` says so.
        if (error instanceof DownstreamUnavailableError) ctx.recorder.markUnavailable({ server: serverId, tool: tool.name, reason: error.reason });
        throw error;
      });
      const flat = toolResultText(result);
      const cut = truncateUtf8(flat.text, maxBytes);
      ctx.recorder.downstreamBytesRead += cut.totalBytes;
      if (flat.isError) {
        const resultPreview = rawPreview(cut.text, TRACE_BOUNDS.toolResult);
        ctx.recorder.recordCall({
          toolCallId,
          name: exposedName,
          status: "error",
          bytes: cut.totalBytes,
          elapsedMs: elapsed(),
          error: "the tool reported an error",
          ...traced,
          result: resultPreview,
        });
        throw new DownstreamToolReportedError(exposedName, cut.text);
      }
      const status = cut.truncated ? "truncated" : "ok";
      const resultPreview = rawPreview(cut.text, TRACE_BOUNDS.toolResult);
      ctx.recorder.recordCall(
        { toolCallId, name: exposedName, status, bytes: cut.totalBytes, elapsedMs: elapsed(), ...traced, result: resultPreview },
        cut.text,
      );
      return cut.text;
    },
  });
}

/** The call's arguments for the trace, kept raw (redacted and cut when the run is stored). */
function traceArguments(input: unknown, maxBytes: number): string {
  try {
    return rawPreview(JSON.stringify(input) ?? "null", Math.min(maxBytes, TRACE_BOUNDS.toolArguments));
  } catch {
    return '"[not serialisable]"';
  }
}

/** A withheld tool and a cancelled call are not the server's errors; the trace says which. */
function failedCallStatus(error: unknown, signal: AbortSignal | undefined): ToolCallRecord["status"] {
  if (error instanceof ToolWithheldError) return "withheld";
  if (signal?.aborted || error instanceof DownstreamCallAbortedError) return "cancelled";
  return "error";
}

function asArguments(input: unknown): Record<string, unknown> {
  if (typeof input !== "object" || input === null || Array.isArray(input)) return {};
  return Object.fromEntries(Object.entries(input));
}
