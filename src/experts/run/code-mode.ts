import { generateText, isStepCount } from "ai";
import { raceWithSignal } from "../core/abort";
import type { ExpertRunInput, ExpertRunResult } from "../core/run-types";
import { AI_SDK_TELEMETRY } from "../models/model-defaults";
import { loopHooks, MODEL_MAX_RETRIES, openRun } from "./open-run";
import codeModeNote from "./prompts/code-mode-note.md";
import defaultSystemPrompt from "./prompts/default-system-prompt.md";
import { composeAnswer, interruptedRunEnd } from "./run-end";
import { CodeModeUnavailableError } from "./runner-errors";
import { codeModeTools, declarationsOf, RUN_SCRIPT } from "./script-tools";

/**
 * Code mode: the model writes scripts over the expert's whitelisted tools instead of calling
 * them one model step at a time. Each `run_script` call runs in a fresh Dynamic Worker
 * (src/experts/sandbox/) whose only way out is a bridge to this run's toolset, so the tool
 * loop's whitelist, approvals, pins, caps, budgets and record hold inside the script; only the
 * script's result goes back to the model. The step budget bounds the scripts.
 */
export async function codeModeExpert(input: ExpertRunInput): Promise<ExpertRunResult> {
  const { expert, loader } = input;
  const limits = expert.budget;
  const run = openRun(input);
  const { signals, budget, recorder, userMessage, tracked, model, end } = run;
  if (!loader) {
    const error = new CodeModeUnavailableError(expert.name);
    return end({ outcome: "error", text: error.toolMessage, error });
  }
  const { serverNotes } = run;
  const innerCalls = new Map<string, string[]>();

  try {
    const toolset = await run.loadToolset();
    const declarations = await declarationsOf(toolset);
    const instructions = `${expert.system_prompt ?? defaultSystemPrompt}\n\n${codeModeNote.replace("{{declarations}}", declarations)}`;
    const tools = codeModeTools({ loader, tools: toolset, budget, recorder, signal: signals.signal, innerCalls }, declarations);
    const loop = generateText({
      model,
      instructions,
      messages: [...(input.history ?? []), userMessage],
      tools,
      stopWhen: [isStepCount(limits.max_steps), () => budget.mustStop()],
      maxOutputTokens: budget.remainingOutputTokens(),
      maxRetries: MODEL_MAX_RETRIES,
      telemetry: AI_SDK_TELEMETRY,
      abortSignal: signals.signal,
      // Each script's own tool calls follow it in the step, as the tool loop's calls are listed.
      ...loopHooks(input, run, instructions, [RUN_SCRIPT], (record) => {
        record.toolCalls = record.toolCalls.flatMap((call) => [call, ...recorder.callsById(innerCalls.get(call.toolCallId) ?? [])]);
      }),
    });
    loop.catch(() => undefined);
    await raceWithSignal(loop, signals.signal);
  } catch (error) {
    return end(interruptedRunEnd(error, signals, tracked, expert, () => composeAnswer(recorder, limits, "timeout", serverNotes())));
  }
  const exhausted = budget.exhaustedBy(recorder.steps.at(-1)?.finishReason, recorder.steps.length);
  return end({ outcome: exhausted ? "budget_exhausted" : "ok", text: composeAnswer(recorder, limits, exhausted, serverNotes()), exhausted });
}
