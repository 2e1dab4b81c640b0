import type { ModelMessage, StepResult, ToolSet } from "ai";
import { log } from "../../observability/logger";
import { raceWithSignal, runSignals } from "../core/abort";
import { buildExpertToolset, type ExpertToolset } from "../tools/expert-toolset";
import type { ExpertRunInput, ExpertRunResult, StepRecord } from "../core/run-types";
import { modelRefOf } from "../models/model-defaults";
import { trackModelFaults } from "../models/model-fault-tracker";
import { retryModelCalls } from "../models/model-retry";
import { RunBudget } from "../core/run-budget";
import { RunRecorder } from "../core/run-recorder";
import { assembleResult, type RunEndFields } from "./run-end";
import finalStepNote from "./prompts/final-step-note.md";
import { describeStep, type EmittedToolCall, reportStep } from "./step-progress";

/**
 * The AI SDK's own retries are off: model-retry.ts retries inside the run's deadline instead,
 * honouring Retry-After and counting each retry in the run's usage.
 */
export const MODEL_MAX_RETRIES = 0;

/**
 * What every run mode starts with: the wall-clock and caller signals, the budget, the recorder,
 * the user turn and the model wrapped for fault tracking, plus how the run ends. `end` carries
 * the toolset's notes, so the toolset is loaded through `loadToolset`.
 */
export function openRun(input: ExpertRunInput) {
  const startedAt = Date.now();
  const signals = runSignals(input.expert.budget.timeout_ms, input.signal);
  const budget = new RunBudget(input.expert.budget);
  const recorder = new RunRecorder(startedAt);
  const userMessage: ModelMessage = { role: "user", content: buildUserMessage(input.args) };
  // The tracker sits inside the retries so it sees every failed attempt, also one whose retry
  // wait the run's clock cut short.
  const tracked = trackModelFaults(input.model);
  const ref = modelRefOf(input.expert);
  const model = retryModelCalls(tracked.model, {
    deadline: startedAt + input.expert.budget.timeout_ms,
    signal: signals.signal,
    onRetry: (retry) => {
      recorder.modelRetries++;
      log("warn", "model call retried", { expert: ref.expert, provider: ref.provider, model: ref.model, ...retry });
    },
  });
  let toolset: ExpertToolset | undefined;
  return {
    signals,
    budget,
    recorder,
    userMessage,
    tracked,
    /** The expert's model with fault tracking and deadline-aware retries: what the loop calls. */
    model,
    /** The expert's whitelisted tools, once loaded (undefined if loading failed or was cut short). */
    toolset: (): ExpertToolset | undefined => toolset,
    /** What the answer says of servers whose tools could not be listed. */
    serverNotes: (): string[] => (toolset?.failedServers ?? []).map((s) => `server "${s.serverId}" was unavailable, its tools were not used`),
    async loadToolset(): Promise<ExpertToolset> {
      const approval = {
        ...(input.askUser ? { askUser: input.askUser } : {}),
        timeoutMs: input.expert.user_input_timeout_ms,
        canPause: input.expert.mode === "synthesize",
      };
      const ctx = { source: input.tools, budget, recorder, approval };
      toolset = await raceWithSignal(buildExpertToolset(input.expert, input.toolPolicy, ctx, signals.signal), signals.signal);
      return toolset;
    },
    end: (fields: RunEndFields): ExpertRunResult => assembleResult({ ...fields, userMessage, notes: toolset?.notes ?? [] }, recorder, budget, startedAt),
  };
}

type OpenRun = ReturnType<typeof openRun>;

/**
 * The generateText hooks every tool-calling mode shares: the last step (or any after the tool
 * budget is spent) gets no tools, so the model answers from what it has instead of ending the
 * run on an unanswered call, and a call it still asks for then is a budget stop, not a refusal
 * (`lastChanceTools`, empty when the mode has no tools to withhold); each step is recorded and
 * reported as progress. `afterStep` sees the recorded step (code mode lists each script's calls).
 */
export function loopHooks(
  input: ExpertRunInput,
  { budget, recorder }: OpenRun,
  instructions: string,
  lastChanceTools: readonly string[],
  afterStep?: (record: StepRecord) => void,
) {
  const limits = input.expert.budget;
  let currentStep = 0;
  return {
    prepareStep: ({ stepNumber }: { stepNumber: number }) => {
      const lastChance = lastChanceTools.length > 0 && ((limits.max_steps > 1 && stepNumber === limits.max_steps - 1) || budget.toolCallsLeft() === 0);
      recorder.budgetWithholdsTools(lastChance ? [...lastChanceTools] : []);
      return {
        maxOutputTokens: budget.remainingOutputTokens(),
        ...(lastChance ? { activeTools: [], instructions: `${instructions}\n\n${finalStepNote}` } : {}),
      };
    },
    onStepStart: ({ stepNumber }: { stepNumber: number }) => {
      currentStep = stepNumber;
      recorder.stepStarted();
    },
    onLanguageModelCallEnd: ({ content }: { content: readonly (({ type: "tool-call" } & EmittedToolCall) | { type: string })[] }) => {
      recorder.modelCallEnded();
      const calls = content.flatMap((part) => (part.type === "tool-call" ? [part as EmittedToolCall] : []));
      reportStep(input, currentStep + 1, describeStep(calls));
    },
    onStepEnd: (step: StepResult<ToolSet>) => {
      const record = recorder.recordStep(step);
      afterStep?.(record);
      budget.addOutputTokens(step.usage.outputTokens);
    },
  };
}

/**
 * The sub-agent's user turn from the orchestrator's validated arguments: a `query` string as is,
 * every other argument as a readable "name: value" line below it.
 */
export function buildUserMessage(args: Record<string, unknown>): string {
  const query = typeof args.query === "string" ? args.query : undefined;
  const rest = Object.entries(args).filter(([key, value]) => !(key === "query" && query !== undefined) && value !== undefined);
  const lines = rest.map(([key, value]) => `${key}: ${renderValue(value)}`);
  if (query === undefined) return lines.join("\n") || "(no arguments)";
  return lines.length === 0 ? query : `${query}\n\n${lines.join("\n")}`;
}

function renderValue(value: unknown): string {
  if (typeof value === "string") return value.includes("\n") ? `\n${value}` : value;
  if (typeof value === "number" || typeof value === "boolean" || value === null) return String(value);
  return JSON.stringify(value, null, 2);
}
