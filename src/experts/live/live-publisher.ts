import type { UserProps } from "../../auth/user-props";
import { log } from "../../observability/logger";
import type { ExpertRunResult, StepProgress, StepRecord } from "../core/run-types";
import { cutName, type LiveEvent, type LiveWait } from "./live-events";
import { type LiveRunFeed, liveFeedStub } from "./live-run-feed";

const MAX_TOOLS = 50;
/** Events in one call to the feed, and calls in a row before what is left is dropped (a stuck feed must not hold memory). */
const MAX_BATCH = 50;
const MAX_CALLS_PER_DRAIN = 100;
/**
 * Events wait this long to go to the feed together (a run's end goes at once): a page cannot show
 * steps faster than an admin reads them, and every call costs the feed a write, under `wrangler
 * dev` on the same cores as the runs (docs/platform-notes.md#live-runs-over-websockets).
 */
export const BATCH_WINDOW_MS = 250;
/**
 * After the feed said no page is watching, runs that start within this long are held in the
 * session instead of queued (LivePublisher.hold): one that ends within BATCH_WINDOW_MS sends
 * nothing (no page would draw it, and a page opened later lists it from the run index,
 * src/dashboard/pages/live-pages.ts); a longer one is sent from then on as usual. The first run
 * after this long goes the usual way and asks again, so a page opened meanwhile misses at most
 * this long of such short runs until it is reloaded.
 */
export const UNWATCHED_RECHECK_MS = 1_000;
/** Runs whose start reached the feed, remembered until their end goes (bounded: a feed, not a record). */
const MAX_ANNOUNCED = 1_000;
/** Runs held while nobody watches (bounded as well: the oldest is forgotten, and its end then dropped unsent). */
const MAX_HELD = 1_000;

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
 * path and kept alive by `waitUntil`, so the feed can neither fail nor hold up a run. Calls to the
 * feed go one at a time per session, through one stub (calls through one stub arrive in order, so
 * a step never overtakes its run's start), each carrying what queued in a window of
 * BATCH_WINDOW_MS: a run's waiting step is replaced by its later one, and a run's end replaces
 * all it had waiting. A slow model's steps each reach the page; a run shorter than the window
 * costs one call and one write in the feed (its end, kept among the recently ended runs).
 */
export class LivePublisher {
  private stub: DurableObjectStub<LiveRunFeed> | undefined;
  private readonly queue: LiveEvent[] = [];
  private sending = false;
  /** When the oldest waiting event was queued (or the last call made, while events kept coming). */
  private queuedSince = 0;
  /** Ends the wait early when a run ends. */
  private wake: (() => void) | undefined;
  /** When the feed last answered that no page watches; undefined when one does, or not asked yet. */
  private unwatchedAt: number | undefined;
  /** Runs whose start the feed has (their end must go, to close them on the page). */
  private readonly announced = new Set<string>();
  /** Runs started while nobody watched, not sent yet (hold). */
  private readonly held = new Map<string, HeldRun>();
  /** A timer to release held runs is set. */
  private releasing = false;

  constructor(
    private readonly env: Env,
    private readonly state: { waitUntil(promise: Promise<unknown>): void },
  ) {}

  started(start: LiveRunStart): void {
    if (this.nobodyWatches()) {
      this.hold(start);
      return;
    }
    this.send(() => startedEvent(start));
  }

  step(runId: string, progress: StepProgress): void {
    const held = this.held.get(runId);
    if (held !== undefined) held.step = progress;
    else this.send(() => stepEvent(runId, progress));
  }

  /** What the run waits on from now (RunWaits calls it as a wait begins or ends); null between waits. */
  waiting(runId: string, waiting: LiveWait | null): void {
    const held = this.held.get(runId);
    if (held !== undefined) held.waiting = waiting;
    else this.send(() => waitingEvent(runId, waiting));
  }

  ended(start: Omit<LiveRunStart, "startedAt" | "maxSteps">, result: ExpertRunResult, steps: readonly StepRecord[], endedAt: number): void {
    // A held run ended before anyone could be shown it: nothing of it is sent (see UNWATCHED_RECHECK_MS).
    if (this.held.delete(start.runId)) return;
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

  /**
   * A run started while the feed recently said nobody watches: kept here, not queued, and sent
   * as its start with its latest step and wait once it has lasted BATCH_WINDOW_MS (what the
   * queue would have done), so a page opened meanwhile still shows it. A run that ends sooner
   * costs a map entry: no event, no drain, no timer of its own.
   */
  private hold(start: LiveRunStart): void {
    if (this.held.size >= MAX_HELD) {
      const oldest = this.held.keys().next();
      if (!oldest.done) this.held.delete(oldest.value);
    }
    this.held.set(start.runId, { start, heldAt: Date.now() });
    this.armRelease(BATCH_WINDOW_MS);
  }

  private armRelease(ms: number): void {
    if (this.releasing) return;
    this.releasing = true;
    this.state.waitUntil(
      new Promise<void>((resolve) => {
        setTimeout(() => {
          this.releasing = false;
          this.release();
          resolve();
        }, ms);
      }),
    );
  }

  /** Sends the held runs that have lasted the window, in one call (in the order they started); waits again for the rest. */
  private release(): void {
    const now = Date.now();
    const due: HeldRun[] = [];
    for (const [runId, held] of this.held) {
      const left = held.heldAt + BATCH_WINDOW_MS - now;
      if (left > 0) {
        this.armRelease(left);
        break;
      }
      this.held.delete(runId);
      due.push(held);
    }
    const first = due[0];
    if (first === undefined) return;
    this.send(
      () =>
        due.flatMap(({ start, step, waiting }) => [
          startedEvent(start),
          ...(step === undefined ? [] : [stepEvent(start.runId, step)]),
          ...(waiting === undefined ? [] : [waitingEvent(start.runId, waiting)]),
        ]),
      first.heldAt,
    );
  }

  /** `since`: when the events arose, for ones that waited elsewhere first (held runs'). */
  private send(events: () => LiveEvent | LiveEvent[], since = Date.now()): void {
    try {
      const made = events();
      if (this.queue.length === 0) this.queuedSince = since;
      for (const next of Array.isArray(made) ? made : [made]) {
        if (next.type === "run-ended") {
          // The end supersedes whatever of its run is still waiting: a run that ends within the
          // wait reaches the feed as its end alone, which the feed need not store.
          this.remove((queued) => (queued.type === "run-started" ? queued.run.runId : queued.runId) === next.runId);
        } else if (next.type === "run-step" || next.type === "run-waiting") {
          // A step (or wait) still queued is replaced by its run's later one: the admin sees the latest.
          this.remove((queued) => queued.type === next.type && queued.runId === next.runId);
        }
        this.queue.push(next);
        if (this.sending && next.type === "run-ended") this.wake?.();
      }
      if (!this.sending) this.state.waitUntil(this.drain());
    } catch (error) {
      log("warn", "live feed event not sent", { error: String(error) });
    }
  }

  private remove(matches: (event: LiveEvent) => boolean): void {
    for (let index = this.queue.length - 1; index >= 0; index -= 1) {
      const queued = this.queue[index];
      if (queued !== undefined && matches(queued)) this.queue.splice(index, 1);
    }
  }

  /**
   * One call at a time: events wait until the oldest has waited BATCH_WINDOW_MS, or a run ends,
   * and then go together, in order. Never rejects.
   */
  private async drain(): Promise<void> {
    this.sending = true;
    try {
      for (let calls = 0; this.queue.length > 0 && calls < MAX_CALLS_PER_DRAIN; calls += 1) {
        const due = this.queuedSince + BATCH_WINDOW_MS - Date.now();
        if (due > 0 && !this.queue.some((event) => event.type === "run-ended")) await this.pause(due);
        const batch = this.unwatched(this.queue.splice(0, MAX_BATCH));
        this.queuedSince = Date.now();
        if (batch.length === 0) continue;
        try {
          this.stub ??= liveFeedStub(this.env);
          const watched = await this.stub.publish(batch);
          this.unwatchedAt = watched ? undefined : Date.now();
          this.remember(batch);
        } catch (error) {
          log("warn", "live feed events not delivered", { events: batch.length, error: String(error) });
        }
      }
      this.queue.length = 0;
    } finally {
      this.sending = false;
    }
  }

  /** The batch without the ends of unannounced runs while the feed recently said nobody watches. */
  private unwatched(batch: LiveEvent[]): LiveEvent[] {
    if (!this.nobodyWatches()) return batch;
    return batch.filter((event) => event.type !== "run-ended" || this.announced.has(event.runId));
  }

  /** The feed said no page watches, less than UNWATCHED_RECHECK_MS ago. */
  private nobodyWatches(): boolean {
    return this.unwatchedAt !== undefined && Date.now() - this.unwatchedAt < UNWATCHED_RECHECK_MS;
  }

  private remember(batch: readonly LiveEvent[]): void {
    for (const event of batch) {
      if (event.type === "run-started") {
        if (this.announced.size >= MAX_ANNOUNCED) this.announced.clear();
        this.announced.add(event.run.runId);
      } else if (event.type === "run-ended") this.announced.delete(event.runId);
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

interface HeldRun {
  start: LiveRunStart;
  heldAt: number;
  step?: StepProgress;
  waiting?: LiveWait | null;
}

function startedEvent(start: LiveRunStart): LiveEvent {
  return {
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
  };
}

function stepEvent(runId: string, progress: StepProgress): LiveEvent {
  return { type: "run-step", at: Date.now(), runId, step: progress.step, maxSteps: progress.maxSteps, activity: cutName(progress.message) };
}

function waitingEvent(runId: string, waiting: LiveWait | null): LiveEvent {
  return { type: "run-waiting", at: Date.now(), runId, waiting };
}

function liveUser(user: UserProps): { id: string; login: string } {
  return { id: cutName(user.userId), login: cutName(user.login) };
}
