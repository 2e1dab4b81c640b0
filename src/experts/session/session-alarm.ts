import { IN_FLIGHT_GRACE_MS } from "../core/run-deadline";
import { DAY_MS } from "./session-retention";

/**
 * An ExpertSession has one alarm (a Durable Object has one) for four jobs, each with its own
 * next due time: flushing the run index outbox (about a second after a run ends), MCP tasks
 * (running ones keep the object alive; ones a restart cut off fail at its start), runs in flight
 * (just after a run's budget timeout, so a restart that cut it off wakes a fresh instance, which
 * closes and indexes it, without waiting for the user's next call) and the retention purge (when
 * the oldest row expires, at most a day away). The alarm is set to the earliest; `alarm()` does
 * what is due and sets it again.
 */

/** The earliest of the given times, ignoring nulls; null when all are. */
export function earliest(...times: readonly (number | null)[]): number | null {
  const set = times.filter((time): time is number => time !== null);
  return set.length === 0 ? null : Math.min(...set);
}

/**
 * The session's alarm time, read from storage once per instance and then kept in memory: this
 * object is the only one that sets its alarm, so what it last set is what is due. `getAlarm` is
 * a storage call with its own promise, and a call asked it twice (at the run's start and end):
 * an AB without both reads measured 0.96x of a no-tool call's CPU (`npm run bench -- --only=AB`). Forgotten when the alarm fires: the runtime clears a fired alarm, or retries a
 * failed handler, on its own.
 */
export class SessionAlarm {
  #at: number | null | undefined;

  constructor(private readonly storage: DurableObjectStorage) {}

  /** When the alarm is due; null when none is set. */
  async current(): Promise<number | null> {
    if (this.#at === undefined) this.#at = await this.storage.getAlarm();
    return this.#at;
  }

  /** Brings the alarm forward to `at` when it is unset or later; never puts it off. */
  async noLaterThan(at: number): Promise<void> {
    const current = await this.current();
    if (current === null || current > at) await this.set(at);
  }

  /** Sets the alarm to `at`, or deletes it when nothing is due. */
  async set(at: number | null): Promise<void> {
    this.#at = at;
    if (at === null) await this.storage.deleteAlarm();
    else await this.storage.setAlarm(at);
  }

  /** The alarm handler began: the next read asks storage again. */
  fired(): void {
    this.#at = undefined;
  }
}

/** The due times of the alarm's jobs other than retention, as the session knows them now. */
export interface AlarmJobs {
  tasksDue(now: number): number | null;
  outboxDue(): number | null;
  inFlightCheck(now: number): number | null;
  /** Whether usage counters wait for their copy to D1 (due again with the next index flush). */
  countersDirty(): boolean;
  /** How long after a run's end its index row is flushed (run-index-outbox.ts). */
  flushDelay(): number;
}

/** When the session's one alarm is due for its jobs, set as runs start and end and as the alarm runs. */
export class AlarmSchedule {
  /** When the last purge found the next row expiring; unknown (purge at the next alarm) until one ran here. */
  private retentionDueAt: number | undefined;

  constructor(
    readonly alarm: SessionAlarm,
    private readonly jobs: AlarmJobs,
  ) {}

  /**
   * A session that holds rows always has an alarm: the retention check a day on (which finds
   * the next expiry), or sooner when index rows wait.
   */
  async armAtStart(now: number): Promise<void> {
    await this.alarm.noLaterThan(Math.min(now + DAY_MS, this.jobs.outboxDue() ?? Number.POSITIVE_INFINITY));
  }

  /** The earliest of the alarm's jobs: retention, tasks, the index outbox, runs in flight, counters to copy. */
  next(retentionDue: number | null, now: number): number | null {
    const countersDue = this.jobs.countersDirty() ? now + this.jobs.flushDelay() : null;
    return earliest(retentionDue, this.jobs.tasksDue(now), this.jobs.outboxDue(), this.jobs.inFlightCheck(now), countersDue);
  }

  /**
   * A run starts. Only an alarm wakes an object nobody calls: without one due soon, a restart now
   * would leave this run unindexed until the user's next call (the constructor closes cut-off
   * runs). A per-user reservation reaches D1 a second later, not at the run's end: D1's copy is
   * how the admin's limits view finds the users to ask (live-usage.ts). Returns the alarm this
   * run's start asks for (`runEnded` lets it go).
   */
  async runStarted(startedAt: number, timeoutMs: number, copiesCounters: boolean): Promise<number> {
    const inFlightAlarm = startedAt + timeoutMs + IN_FLIGHT_GRACE_MS;
    const countersCopy = copiesCounters ? startedAt + this.jobs.flushDelay() : inFlightAlarm;
    await this.alarm.noLaterThan(Math.min(inFlightAlarm, countersCopy));
    return inFlightAlarm;
  }

  /**
   * After a run ends its index row waits for the flush; the alarm its start armed (`inFlightAlarm`)
   * is not needed any more and gives way to what is due (the flush, other runs, tasks, retention).
   * No extra storage op: the alarm is read from memory and set at most once, as the flush needs.
   * Every job brings the alarm forward to its own due time when it is queued (noLaterThan),
   * so an alarm due no later than this run's index row, and not the one this run's start set,
   * already covers what is due: then nothing is read (while calls keep coming, the usual case:
   * the flush a second after the last run is always pending).
   */
  async runEnded(inFlightAlarm: number, now: number): Promise<void> {
    const current = await this.alarm.current();
    if (current !== null && current !== inFlightAlarm && current <= now + this.jobs.flushDelay()) return;
    const next = this.next(this.retentionDueAt ?? now + DAY_MS, now);
    if (next !== null && (current === null || current === inFlightAlarm || next < current)) await this.alarm.set(next);
  }

  /**
   * At an alarm, after the flushes: true when this instance knows the retention purge (which scans
   * the runs and turns) is not due yet; the alarm is then set for the earliest job.
   */
  async retentionWaits(now: number): Promise<boolean> {
    if (this.retentionDueAt === undefined || this.retentionDueAt <= now) return false;
    await this.alarm.set(this.next(this.retentionDueAt, now));
    return true;
  }

  /** After a purge: the next row expires at `retentionDue` (null: none left), and the alarm is set for the earliest job. */
  async purged(retentionDue: number | null, now: number): Promise<void> {
    this.retentionDueAt = retentionDue ?? undefined;
    await this.alarm.set(this.next(retentionDue, now));
  }
}
