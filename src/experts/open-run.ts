import type { ModelMessage } from "ai";
import { raceWithSignal, runSignals } from "./abort";
import { buildExpertToolset, type ExpertToolset } from "./expert-toolset";
import type { ExpertRunInput, ExpertRunResult } from "./expert-types";
import type { RunEndFields } from "./interrupted-run";
import { trackModelFaults } from "./model-fault-tracker";
import { RunBudget } from "./run-budget";
import { RunRecorder } from "./run-recorder";
import { assembleResult } from "./run-result";
import { buildUserMessage } from "./user-message";

/** Provider retries (429, 5xx) back off 2 s, then 4 s; the run's signal cuts the wait short. */
export const MODEL_MAX_RETRIES = 2;

/**
 * What every run mode starts with: the wall-clock and caller signals, the budget, the recorder,
 * the user turn and the model wrapped for fault tracking, plus how the run ends. `end` carries
 * the toolset's notes, so the toolset is loaded through `loadToolset`.
 */
export function openRun(input: ExpertRunInput) {
  const startedAt = Date.now();
  const signals = runSignals(input.expert.budget.timeout_ms, input.signal);
  const budget = new RunBudget(input.expert.budget);
  const recorder = new RunRecorder();
  const userMessage: ModelMessage = { role: "user", content: buildUserMessage(input.args) };
  const tracked = trackModelFaults(input.model);
  let toolset: ExpertToolset | undefined;
  return {
    signals,
    budget,
    recorder,
    userMessage,
    tracked,
    /** The expert's whitelisted tools, once loaded (undefined if loading failed or was cut short). */
    toolset: (): ExpertToolset | undefined => toolset,
    async loadToolset(): Promise<ExpertToolset> {
      const ctx = { source: input.tools, budget, recorder };
      toolset = await raceWithSignal(buildExpertToolset(input.expert, input.toolPolicy, ctx, signals.signal), signals.signal);
      return toolset;
    },
    end: (fields: RunEndFields): ExpertRunResult =>
      assembleResult({ ...fields, userMessage, notes: toolset?.notes ?? [] }, recorder, budget, startedAt),
  };
}
