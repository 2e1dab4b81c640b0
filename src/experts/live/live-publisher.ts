import type { UserProps } from "../../auth/user-props";
import { log } from "../../observability/logger";
import type { ExpertRunResult, StepProgress, StepRecord } from "../run/expert-types";
import { cutName, type LiveEvent } from "./live-events";
import { type LiveRunFeed, liveFeedStub } from "./live-run-feed";

const MAX_TOOLS = 50;

export interface LiveRunStart {
  runId: string;
  skill: string;
  expert: string;
  user: UserProps;
  startedAt: number;
  maxSteps: number;
}

/**
 * How an ExpertSession tells the tenant's live feed about its runs: one RPC per event, sent
 * without awaiting and kept alive by `waitUntil`, so the feed can neither fail nor slow a run.
 * One stub per session object, because calls made through one stub arrive in the order sent
 * (a step never overtakes its run's start).
 */
export class LivePublisher {
  private stub: DurableObjectStub<LiveRunFeed> | undefined;

  constructor(
    private readonly env: Env,
    private readonly state: { waitUntil(promise: Promise<unknown>): void },
  ) {}

  started(start: LiveRunStart): void {
    this.send(() => ({
      type: "run-started",
      at: Date.now(),
      run: {
        runId: start.runId,
        skill: cutName(start.skill),
        expert: cutName(start.expert),
        user: liveUser(start.user),
        startedAt: start.startedAt,
        maxSteps: start.maxSteps,
        step: 0,
        activity: "starting",
        updatedAt: start.startedAt,
      },
    }));
  }

  step(runId: string, progress: StepProgress): void {
    this.send(() => ({ type: "run-step", at: Date.now(), runId, step: progress.step, maxSteps: progress.maxSteps, activity: cutName(progress.message) }));
  }

  ended(start: Omit<LiveRunStart, "startedAt" | "maxSteps">, result: ExpertRunResult, steps: readonly StepRecord[], endedAt: number): void {
    this.send(() => ({
      type: "run-ended",
      at: endedAt,
      runId: start.runId,
      skill: cutName(start.skill),
      expert: cutName(start.expert),
      user: liveUser(start.user),
      outcome: result.outcome,
      steps: result.usage.steps,
      toolCalls: result.usage.toolCalls,
      inputTokens: result.usage.inputTokens,
      outputTokens: result.usage.outputTokens,
      elapsedMs: result.usage.elapsedMs,
      tools: steps
        .flatMap((step) => step.toolCalls)
        .slice(0, MAX_TOOLS)
        .map((call) => ({ name: cutName(call.name), status: call.status })),
    }));
  }

  private send(event: () => LiveEvent): void {
    try {
      this.stub ??= liveFeedStub(this.env);
      const stub = this.stub;
      const built = event();
      const sent = (async () => {
        await stub.publish(built);
      })().catch((error: unknown) => log("warn", "live feed event not delivered", { type: built.type, error: String(error) }));
      this.state.waitUntil(sent);
    } catch (error) {
      log("warn", "live feed event not sent", { error: String(error) });
    }
  }
}

function liveUser(user: UserProps): { id: string; login: string } {
  return { id: cutName(user.userId), login: cutName(user.login) };
}
