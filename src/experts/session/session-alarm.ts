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
