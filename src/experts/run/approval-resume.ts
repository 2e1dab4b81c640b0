import type { ModelMessage, ToolResultPart, ToolSet } from "ai";
import type { ApprovalResume, UserDecision } from "../core/run-types";
import type { RunRecorder } from "../core/run-recorder";
import { askToolName, withToolResults } from "./ask-back";
import { argumentsText } from "../tools/tool-approval";
import { ToolCallDeclinedError } from "../tools/tool-errors";

/**
 * The turns a run paused on approvals continues from: each pending call approved is run now
 * (through the same adapter, so it counts against the budget, is truncated and recorded) and its
 * result added; each one declined gets a refusal the model reads; a question asked in the same
 * step is answered as not sent. The decision is recorded on each call for the trace.
 */
export async function approvedTurns(resume: ApprovalResume, ungated: ToolSet, recorder: RunRecorder, signal: AbortSignal): Promise<ModelMessage[]> {
  const decision: UserDecision = { outcome: resume.approve ? "approved" : (resume.refusal ?? "declined"), by: resume.by };
  const results: ToolResultPart[] = [];
  for (const approval of resume.approvals) {
    recorder.markDecided(approval.toolCallId);
    const execute = ungated[approval.name]?.execute;
    if (!resume.approve || !execute) {
      const reason = resume.approve
        ? "the tool is no longer available to this expert"
        : resume.refusal === "cancelled"
          ? `the ${resume.by} dismissed the request without deciding`
          : `the ${resume.by} declined it`;
      const refusal = new ToolCallDeclinedError(approval.name, reason);
      recorder.recordCall({
        toolCallId: approval.toolCallId,
        name: approval.name,
        status: "declined",
        bytes: 0,
        elapsedMs: 0,
        error: `not executed: ${reason}`,
        server: approval.server,
        tool: approval.tool,
        args: argumentsText(approval.input),
        decision: resume.approve ? { outcome: "failed", by: resume.by } : decision,
      });
      results.push(errorResult(approval.toolCallId, approval.name, refusal.toolMessage));
      continue;
    }
    try {
      const output: unknown = await execute(approval.input, { toolCallId: approval.toolCallId, messages: [], abortSignal: signal, context: {} });
      results.push({ type: "tool-result", toolCallId: approval.toolCallId, toolName: approval.name, output: { type: "text", value: String(output) } });
    } catch (error) {
      if (signal.aborted) throw error;
      results.push(errorResult(approval.toolCallId, approval.name, error instanceof Error ? error.message : String(error)));
    } finally {
      recorder.markDecision(approval.toolCallId, decision);
    }
  }
  for (const toolCallId of resume.askCallIds) {
    results.push({
      type: "tool-result",
      toolCallId,
      toolName: askToolName(resume.turns, toolCallId),
      output: { type: "text", value: "Not sent: the run paused for an approval first. Ask again if you still need to." },
    });
  }
  return withToolResults(resume.turns, results);
}

function errorResult(toolCallId: string, toolName: string, message: string): ToolResultPart {
  return { type: "tool-result", toolCallId, toolName, output: { type: "error-text", value: message } };
}
