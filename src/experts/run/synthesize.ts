import { AI_SDK_TELEMETRY } from "../models/model-defaults";
import { generateText, isStepCount, type ToolSet } from "ai";
import { raceWithSignal } from "../core/abort";
import type { ExpertRunInput, ExpertRunResult } from "../core/run-types";
import { ASK_ORCHESTRATOR, ASK_USER, askOrchestratorTool, askUserTool, pendingQuestion, withOpeningTurns } from "./ask-back";
import { approvedTurns } from "./approval-resume";
import { composeAnswer, interruptedRunEnd } from "./run-end";
import { loopHooks, MODEL_MAX_RETRIES, openRun } from "./open-run";
import defaultSystemPrompt from "./prompts/default-system-prompt.md";
import { MalformedToolArgumentsError, OutputSchemaMismatchError } from "./runner-errors";
import { outputSchemaInstructions, parseStructuredAnswer } from "./structured-answer";

/** Malformed tool arguments go back to the model this many times; one more ends the run. */
export const MAX_MALFORMED_TOOL_INPUTS = 2;

/**
 * Runs one expert call: a bounded generateText tool loop over the expert's whitelisted
 * downstream tools. Every budget in `expert.budget` is enforced; running out returns what was
 * gathered. Cancellation, model failures and unavailable tools come back as outcomes, not throws.
 * This is the `synthesize` mode; a `route` expert goes to route.ts instead (run-expert.ts dispatches).
 */
export async function synthesizeExpert(input: ExpertRunInput): Promise<ExpertRunResult> {
  const { expert } = input;
  const limits = expert.budget;
  const run = openRun(input);
  const { signals, budget, recorder, userMessage, tracked, model } = run;
  let opening = input.resume;
  const end: typeof run.end = (fields) => withOpeningTurns(run.end(fields), opening);
  const { serverNotes } = run;

  try {
    const tools = await run.loadToolset();
    const basePrompt = expert.system_prompt ?? defaultSystemPrompt;
    const instructions = expert.output_schema ? `${basePrompt}\n\n${outputSchemaInstructions(expert.output_schema)}` : basePrompt;
    const askBack: ToolSet = expert.ask_back
      ? { [ASK_ORCHESTRATOR]: askOrchestratorTool(), [ASK_USER]: askUserTool(input.askUser, expert.user_input_timeout_ms, recorder) }
      : {};
    // A run paused on approvals: the decided calls run (or are refused) before the model's next step.
    if (input.approvalResume) opening = await raceWithSignal(approvedTurns(input.approvalResume, tools.ungated, recorder, signals.signal), signals.signal);
    const loop = generateText({
      model,
      instructions,
      messages: [...(input.history ?? []), ...(opening ?? [userMessage])],
      tools: { ...tools.tools, ...askBack },
      stopWhen: [isStepCount(limits.max_steps), () => budget.mustStop() || recorder.invalidInputs > MAX_MALFORMED_TOOL_INPUTS],
      maxOutputTokens: budget.remainingOutputTokens(),
      maxRetries: MODEL_MAX_RETRIES,
      telemetry: AI_SDK_TELEMETRY,
      abortSignal: signals.signal,
      // With no tools of its own and no ask-back, nothing is withheld on the last step.
      ...loopHooks(input, run, instructions, tools.names.length > 0 || expert.ask_back ? [...tools.names, ...Object.keys(askBack)] : []),
    });
    loop.catch(() => undefined);
    await raceWithSignal(loop, signals.signal);
  } catch (error) {
    return end(interruptedRunEnd(error, signals, tracked, expert, () => composeAnswer(recorder, limits, "timeout", serverNotes())));
  }

  if (recorder.invalidInputs > MAX_MALFORMED_TOOL_INPUTS) {
    const error = new MalformedToolArgumentsError(expert.name, recorder.invalidInputs, [...new Set(recorder.invalidInputTools)]);
    return end({ outcome: "error", text: error.toolMessage, error });
  }
  const asked = pendingQuestion(recorder, run.toolset()?.gated);
  if (asked) return end({ outcome: "paused", text: asked.question, question: asked });
  const exhausted = budget.exhaustedBy(recorder.steps.at(-1)?.finishReason, recorder.steps.length);
  const outcome = exhausted ? "budget_exhausted" : "ok";
  if (expert.output_schema) {
    const answer = parseStructuredAnswer(recorder.lastText, expert.output_schema);
    if (!answer.ok) {
      const error = new OutputSchemaMismatchError(expert.name, answer.problem);
      return end({ outcome: "error", text: error.toolMessage, error, exhausted });
    }
    return end({ outcome, text: answer.json, exhausted, structured: answer.value });
  }
  return end({ outcome, text: composeAnswer(recorder, limits, exhausted, serverNotes()), exhausted });
}
