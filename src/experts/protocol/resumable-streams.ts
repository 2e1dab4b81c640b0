import { log } from "../../observability/logger";
import type { StepProgress } from "../core/run-types";
import type { ExpertCallResult, ResumableStreamRef } from "../core/call-types";
import { answerFromRecord } from "./interrupted-run";
import type { StoredRun } from "../records/run-log";
import { IN_FLIGHT_GRACE_MS } from "../core/run-deadline";
import { StreamRecords } from "./stream-records";

export type { ResumableStreamRef };

/** The events after a resumption point: progress (numbered from 1 when progress is sent) and, once the run ended, its result. */
export interface StreamReplay {
  ref: ResumableStreamRef;
  progress: Array<{ seq: number; progress: StepProgress }>;
  /** The run's answer and its event number; absent while the run goes on. */
  result?: { seq: number; result: ExpertCallResult };
}

/** The reader of a stream that the first response is: a resumed one names itself (resumable-calls.ts). */
export const FIRST_READER = "first";

const KEEP_ENDED_MS = 600_000;
const MAX_STREAMS = 200;
const SWEEP_EVERY_MS = 60_000;

interface Entry {
  ref: ResumableStreamRef;
  runId: string;
  /** The responses reading the stream now: the first response until it drops, each resumed one until it drops. */
  readers: Set<string>;
  /** Readers that dropped: a late read of theirs (a round already under way) does not count as a reader again. */
  gone: Set<string>;
  /** Event numbers before this one were sent by an instance before a restart (0 for a stream opened here). */
  offset: number;
  progress: StepProgress[];
  result?: ExpertCallResult;
  endedAt?: number;
  deadlineAt: number;
  wake: Array<() => void>;
}

/**
 * The events of expert calls whose SSE stream a 2025-11-25 client may resume after its response
 * dropped (`Last-Event-ID`). The run goes on in this object when the response drops, so its
 * progress and answer are kept here, in memory, numbered the way the first stream numbered them:
 * event n is the n-th progress notification, the answer follows. Which run and request a stream
 * belongs to is also in SQLite (stream-records.ts): after a restart the events are gone, but a
 * resume still gets the run's outcome (interrupted, from its record) instead of a 404.
 *
 * A run is given up for a dropped response only when no response reads its stream, whatever
 * order a drop and a resume reach this object in: a client that reconnects at once may be here
 * before the server noticed its first response drop.
 */
export class ResumableStreams {
  private readonly entries = new Map<string, Entry>();
  private readonly records: StreamRecords;
  private sweepAt = 0;

  constructor(
    sql: SqlStorage,
    private readonly runRecord: (runId: string) => StoredRun | null,
  ) {
    this.records = new StreamRecords(sql);
  }

  open(ref: ResumableStreamRef, runId: string, now = Date.now()): void {
    // Every call opens a stream: the expired are swept at most once a SWEEP_EVERY_MS, not on each
    // (a full map is MAX_STREAMS entries to walk), and a full map gives up its oldest ended stream.
    if (now >= this.sweepAt) {
      this.sweepAt = now + SWEEP_EVERY_MS;
      for (const [id, entry] of this.entries) if (entry.endedAt !== undefined && entry.endedAt + KEEP_ENDED_MS <= now) this.entries.delete(id);
      this.records.purge(now - KEEP_ENDED_MS);
    }
    if (this.entries.size >= MAX_STREAMS) {
      for (const [id, entry] of this.entries) {
        if (entry.endedAt === undefined) continue;
        this.entries.delete(id);
        break;
      }
    }
    const deadlineAt = now + ref.timeoutMs + IN_FLIGHT_GRACE_MS;
    this.records.add(ref, runId, now, deadlineAt);
    this.entries.set(ref.id, { ref, runId, readers: new Set([FIRST_READER]), gone: new Set(), offset: 0, progress: [], deadlineAt, wake: [] });
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

  /**
   * The events after event `after` for `reader`, waiting up to `waitMs` for one while the run
   * goes on; null for a stream this session never opened (another user's, or long ended). A
   * run that should have ended by now (its deadline passed) is answered as interrupted.
   */
  async after(id: string, after: number, waitMs: number, reader: string, now = Date.now()): Promise<StreamReplay | null> {
    const entry = this.entries.get(id) ?? this.restore(id, after, now);
    if (!entry) return null;
    if (!entry.gone.has(reader)) entry.readers.add(reader);
    const wait = Math.min(waitMs, entry.deadlineAt - now);
    const began = Date.now();
    if (this.count(entry) <= after && entry.result === undefined && wait > 0) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      await new Promise<void>((resolve) => {
        timer = setTimeout(resolve, wait);
        entry.wake.push(resolve);
      });
      if (timer !== undefined) clearTimeout(timer);
    }
    // Past its deadline the run should have ended: the stream ends, saying so, rather than wait on.
    const late = now + (Date.now() - began) >= entry.deadlineAt;
    const result = entry.result ?? (late ? answerFromRecord(entry.runId, this.runRecord(entry.runId)) : undefined);
    const sent = entry.ref.progressToken === undefined ? [] : entry.progress.map((progress, index) => ({ seq: entry.offset + index + 1, progress }));
    return {
      ref: entry.ref,
      progress: sent.filter((event) => event.seq > after),
      ...(result === undefined ? {} : { result: { seq: entry.offset + sent.length + 1, result } }),
    };
  }

  /**
   * `reader`'s response dropped. When no other response reads the stream (`reading` 0), the
   * run whose id is returned should be cancelled unless a client resumes the stream before
   * `check` runs; null when there is nothing to cancel (the run ended, or the stream is unknown).
   */
  dropped(id: string, reader: string): { runId: string; reading: number; check: () => boolean } | null {
    const entry = this.entries.get(id);
    if (!entry || entry.result !== undefined) return null;
    entry.readers.delete(reader);
    entry.gone.add(reader);
    return { runId: entry.runId, reading: entry.readers.size, check: () => entry.readers.size === 0 && entry.result === undefined };
  }

  /** `reader`'s response dropped: `cancel` the run after `graceMs` unless a response reads its stream by then. */
  giveUpUnlessResumed(id: string, reader: string, graceMs: number, cancel: (runId: string) => void): void {
    const dropped = this.dropped(id, reader);
    if (!dropped) return;
    if (dropped.reading > 0) {
      log("info", "call stream dropped; another connection reads it, the run goes on", { runId: dropped.runId });
      return;
    }
    setTimeout(() => {
      if (dropped.check()) cancel(dropped.runId);
    }, graceMs);
  }

  /**
   * A stream this instance holds no events of, from its durable record: the run went on in an
   * instance a restart ended (its answer is its record's outcome), or runs here still (then it
   * ends into this entry as into one opened here).
   */
  private restore(id: string, after: number, now: number): Entry | undefined {
    const record = this.records.get(id);
    if (!record) return undefined;
    const run = this.runRecord(record.runId);
    const entry: Entry = {
      ref: record.ref,
      runId: record.runId,
      readers: new Set(),
      gone: new Set(),
      offset: after,
      progress: [],
      deadlineAt: record.deadlineAt,
      wake: [],
    };
    if (run?.outcome !== "running") {
      entry.result = answerFromRecord(record.runId, run);
      entry.endedAt = now;
    }
    this.entries.set(id, entry);
    return entry;
  }

  /** How many numbered events the stream has so far (progress is numbered only when it is sent). */
  private count(entry: Entry): number {
    return entry.offset + (entry.ref.progressToken === undefined ? 0 : entry.progress.length);
  }

  private notify(entry: Entry): void {
    for (const wake of entry.wake.splice(0)) wake();
  }
}
