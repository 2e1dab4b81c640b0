import type { UserProps } from "../../auth/user-props";
import type { ExpertRunResult, StepProgress, StepRecord } from "../core/run-types";
import type { LivePublisher, LiveRunStart } from "./live-publisher";
import { RunWaits } from "./live-waits";

/** One run as the live feed hears of it, from its start (startLiveRun) to its end. */
export interface LiveRun {
  /** Wraps the run's model, tools and prompter: the feed shows what the run waits on. */
  readonly waits: RunWaits;
  step(progress: StepProgress): void;
  ended(result: ExpertRunResult, steps: readonly StepRecord[], endedAt: number): void;
}

/** Tells the feed a run started; the handle tells it the run's steps, waits and end. */
export function startLiveRun(live: LivePublisher, start: LiveRunStart): LiveRun {
  const run: { runId: string; skill: string; expert: string; user: UserProps } = {
    runId: start.runId,
    skill: start.skill,
    expert: start.expert,
    user: start.user,
  };
  live.started(start);
  return {
    waits: new RunWaits((waiting) => live.waiting(start.runId, waiting)),
    step: (progress) => live.step(start.runId, progress),
    ended: (result, steps, endedAt) => live.ended(run, result, steps, endedAt),
  };
}
