import type { StepProgress } from "../run/expert-types";
import type { ExpertCallResult } from "./expert-call";

/** What a resumed stream needs to write its events as the first stream would have. */
export interface ResumableStreamRef {
  /** Minted by the MCP surface; the stream's event ids are `<id>:<n>`. */
  id: string;
  requestId: string | number;
  progressToken?: string | number;
  structuredExpected: boolean;
}

/** The events after a resumption point: progress (numbered from 1 when progress is sent) and, once the run ended, its result. */
export interface StreamReplay {
  ref: ResumableStreamRef;
  progress: Array<{ seq: number; progress: StepProgress }>;
  /** The run's answer and its event number; absent while the run goes on. */
  result?: { seq: number; result: ExpertCallResult };
}

const KEEP_ENDED_MS = 600_000;
const MAX_STREAMS = 200;
const SWEEP_EVERY_MS = 60_000;

interface Entry {
  ref: ResumableStreamRef;
  runId: string;
  /** Whether a client read the stream since it was last seen dropping. */
  resumed: boolean;
  progress: StepProgress[];
  result?: ExpertCallResult;
  endedAt?: number;
  wake: Array<() => void>;
}

/**
 * The events of expert calls whose SSE stream a 2025-11-25 client may resume after a dropped
 * connection (`Last-Event-ID`). The run goes on in this object when the connection drops, so its
 * progress and answer are kept here, in memory (a restart ends the run too), numbered the way
 * the first stream numbered them: event n is the n-th progress notification, the answer follows.
 */
export class ResumableStreams {
  private readonly entries = new Map<string, Entry>();
  private sweepAt = 0;

  open(ref: ResumableStreamRef, runId: string, now = Date.now()): void {
    // Every call opens a stream: the expired are swept at most once a SWEEP_EVERY_MS, not on each
    // (a full map is MAX_STREAMS entries to walk), and a full map gives up its oldest ended stream.
    if (now >= this.sweepAt) {
      this.sweepAt = now + SWEEP_EVERY_MS;
      for (const [id, entry] of this.entries) if (entry.endedAt !== undefined && entry.endedAt + KEEP_ENDED_MS <= now) this.entries.delete(id);
    }
    if (this.entries.size >= MAX_STREAMS) {
      for (const [id, entry] of this.entries) {
        if (entry.endedAt === undefined) continue;
        this.entries.delete(id);
        break;
      }
    }
    this.entries.set(ref.id, { ref, runId, resumed: false, progress: [], wake: [] });
  }

  progress(id: string, progress: StepProgress): void {
    const entry = this.entries.get(id);
    if (!entry) return;
    entry.progress.push(progress);
    this.notify(entry);
  }

  finish(id: string, result: ExpertCallResult, now = Date.now()): void {
    const entry = this.entries.get(id);
    if (!entry) return;
    entry.result = result;
    entry.endedAt = now;
    this.notify(entry);
  }

  /** The events after event `after`, waiting up to `waitMs` for one while the run goes on; null for an unknown stream. */
  async after(id: string, after: number, waitMs: number): Promise<StreamReplay | null> {
    const entry = this.entries.get(id);
    if (!entry) return null;
    entry.resumed = true;
    if (this.count(entry) <= after && entry.result === undefined) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      await new Promise<void>((resolve) => {
        timer = setTimeout(resolve, waitMs);
        entry.wake.push(resolve);
      });
      if (timer !== undefined) clearTimeout(timer);
    }
    const sent = entry.ref.progressToken === undefined ? [] : entry.progress.map((progress, index) => ({ seq: index + 1, progress }));
    return {
      ref: entry.ref,
      progress: sent.filter((event) => event.seq > after),
      ...(entry.result === undefined ? {} : { result: { seq: sent.length + 1, result: entry.result } }),
    };
  }

  /**
   * The stream's connection dropped: the run whose id is returned should be cancelled unless a
   * client resumes the stream before `check` runs (null: nothing to cancel, the run ended).
   */
  dropped(id: string): { runId: string; check: () => boolean } | null {
    const entry = this.entries.get(id);
    if (!entry || entry.result !== undefined) return null;
    entry.resumed = false;
    return { runId: entry.runId, check: () => !entry.resumed && entry.result === undefined };
  }

  /** How many numbered events the stream has so far (progress is numbered only when it is sent). */
  private count(entry: Entry): number {
    return entry.ref.progressToken === undefined ? 0 : entry.progress.length;
  }

  private notify(entry: Entry): void {
    for (const wake of entry.wake.splice(0)) wake();
  }
}
