import type { UserProps } from "../../auth/user-props";
import { log } from "../../observability/logger";
import type { ExpertRunResult, StepProgress, StepRecord } from "../run/expert-types";
import { cutName, type LiveEvent } from "./live-events";
import { type LiveRunFeed, liveFeedStub } from "./live-run-feed";

const MAX_TOOLS = 50;
/** Events in one call to the feed, and calls in a row before what is left is dropped (a stuck feed must not hold memory). */
const MAX_BATCH = 50;
const MAX_CALLS_PER_DRAIN = 100;
/**
 * Steps alone go to the feed at most this often per session (a run start or end goes at once):
 * a page cannot show steps faster than an admin reads them, and every call costs the feed a write.
 */
export const STEP_INTERVAL_MS = 250;

export interface LiveRunStart {
  runId: string;
  skill: string;
  expert: string;
  user: UserProps;
  startedAt: number;
  maxSteps: number;
}

/**
 * How an ExpertSession tells the tenant's live feed about its runs, never awaited on the run's
 * path and kept alive by `waitUntil`, so the feed can neither fail nor hold up a run. One call to
 * the feed at a time per session: events that come while it is under way go together in the
 * next call, in order (a step never overtakes its run's start), and a step replaces its run's
 * earlier step still waiting. A slow model's steps each reach the page; a burst of fast steps
 * costs one call, not one per step (measured: docs/platform-notes.md#live-runs-over-websockets).
 */
export class LivePublisher {
  private stub: DurableObjectStub<LiveRunFeed> | undefined;
  private readonly queue: LiveEvent[] = [];
  private sending = false;
  private lastCall = 0;
  /** Ends the wait between step-only calls early when a start or end queues. */
  private wake: (() => void) | undefined;

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
      const next = event();
      // A step still waiting replaces the earlier one of its run: the admin sees the latest step.
      const waiting = next.type === "run-step" ? this.queue.findIndex((queued) => queued.type === "run-step" && queued.runId === next.runId) : -1;
      if (waiting >= 0) this.queue[waiting] = next;
      else this.queue.push(next);
      if (!this.sending) this.state.waitUntil(this.drain());
      else if (next.type !== "run-step") this.wake?.();
    } catch (error) {
      log("warn", "live feed event not sent", { error: String(error) });
    }
  }

  /** One call at a time; what queued meanwhile goes in the next call, in order. Never rejects. */
  private async drain(): Promise<void> {
    this.sending = true;
    try {
      for (let calls = 0; this.queue.length > 0 && calls < MAX_CALLS_PER_DRAIN; calls += 1) {
        const due = this.lastCall + STEP_INTERVAL_MS - Date.now();
        if (due > 0 && this.queue.every((event) => event.type === "run-step")) await this.pause(due);
        const batch = this.queue.splice(0, MAX_BATCH);
        this.lastCall = Date.now();
        try {
          this.stub ??= liveFeedStub(this.env);
          await this.stub.publish(batch);
        } catch (error) {
          log("warn", "live feed events not delivered", { events: batch.length, error: String(error) });
        }
      }
      this.queue.length = 0;
    } finally {
      this.sending = false;
    }
  }

  private pause(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wake = done;
    }).finally(() => {
      this.wake = undefined;
    });
  }
}

function liveUser(user: UserProps): { id: string; login: string } {
  return { id: cutName(user.userId), login: cutName(user.login) };
}
