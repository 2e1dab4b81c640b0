import { AI_SDK_TELEMETRY } from "../models/model-defaults";
import { generateText, isStepCount, ToolChoiceViolationError } from "ai";
import type { ToolSet } from "ai";
import { raceWithSignal } from "../core/abort";
import type { ExpertRunInput, ExpertRunResult } from "../core/run-types";
import { gatheredSummary, interruptedRunEnd, type RunEndFields } from "./run-end";
import { MODEL_MAX_RETRIES, openRun } from "./open-run";
import routeSystemPrompt from "./prompts/route-system-prompt.md";
import type { RunRecorder } from "../core/run-recorder";
import { RouteWithoutToolCallError } from "./runner-errors";
import { describeStep, reportStep } from "./step-progress";

/**
 * Route mode (mcp-agentify's orchestrateTask): one model call that must pick a whitelisted tool,
 * then that one call runs and its result is the answer, with no second model call. The tools are
 * handed to the model without `execute` so the SDK runs none of them; the runner then executes
 * only the first valid call, through the same adapter (budget, truncation, signal, record).
 */
export async function routeExpert(input: ExpertRunInput): Promise<ExpertRunResult> {
  const { expert } = input;
  const run = openRun(input);
  const { signals, budget, recorder, userMessage, tracked, model, end } = run;

  try {
    const tools = await run.loadToolset();
    if (tools.names.length === 0) return routeFailed(end, new RouteWithoutToolCallError(expert.name, []));
    const call = generateText({
      model,
      instructions: expert.system_prompt ?? routeSystemPrompt,
      messages: [...(input.history ?? []), userMessage],
      tools: withoutExecute(tools.tools),
      toolChoice: "required",
      stopWhen: isStepCount(1),
      maxOutputTokens: budget.remainingOutputTokens(),
      maxRetries: MODEL_MAX_RETRIES,
      telemetry: AI_SDK_TELEMETRY,
      abortSignal: signals.signal,
    });
    call.catch(() => undefined);
    const step = await raceWithSignal(call, signals.signal).then(
      (generated) => generated.steps[0],
      (error: unknown) => {
        // The SDK enforces toolChoice "required" itself: a text-only answer arrives as this error.
        if (ToolChoiceViolationError.isInstance(error)) return undefined;
        throw error;
      },
    );
    if (!step) {
      reportStep(input, 1, describeStep([]), 1);
      return routeFailed(end, new RouteWithoutToolCallError(expert.name, []));
    }
    budget.addOutputTokens(step.usage.outputTokens);
    const calls = step.content.flatMap((part) => (part.type === "tool-call" ? [part] : []));
    const chosen = calls.find((part) => !(part.dynamic && part.invalid));
    const execute = chosen ? tools.tools[chosen.toolName]?.execute : undefined;
    // Only the chosen call runs; the invalid ones are reported as refused.
    reportStep(input, 1, describeStep(chosen ? [chosen] : calls), 1);
    if (!chosen || !execute) {
      recordRouteStep(recorder, step);
      return routeFailed(
        end,
        new RouteWithoutToolCallError(
          expert.name,
          calls.map((part) => part.toolName),
        ),
      );
    }
    const options = { toolCallId: chosen.toolCallId, messages: [], abortSignal: signals.signal, context: {} };
    const output = await raceWithSignal(Promise.resolve(execute(chosen.input, options)), signals.signal).then(
      (value: unknown) => ({ ok: true as const, text: typeof value === "string" ? value : JSON.stringify(value) }),
      (error: unknown) => ({ ok: false as const, error }),
    );
    // Recorded after the call ran, so the step's record carries the call's real status.
    recordRouteStep(recorder, step);
    if (!output.ok) throw output.error;
    return end({ outcome: "ok", text: output.text, exhausted: null });
  } catch (error) {
    return end(interruptedRunEnd(error, signals, tracked, expert, () => gatheredSummary(recorder)));
  }
}

function routeFailed(end: (fields: RunEndFields) => ExpertRunResult, error: RouteWithoutToolCallError): ExpertRunResult {
  return end({ outcome: "error", text: error.toolMessage, error });
}

function recordRouteStep(recorder: RunRecorder, step: Parameters<RunRecorder["recordStep"]>[0]): void {
  recorder.recordStep(step);
  // The thread keeps the request and the returned result: the model's turn holds calls that
  // were never run (no tool result), which providers reject when it is replayed.
  recorder.responseMessages.splice(0);
}

function withoutExecute(tools: ToolSet): ToolSet {
  return Object.fromEntries(Object.entries(tools).map(([name, tool]) => [name, { ...tool, execute: undefined }]));
}
