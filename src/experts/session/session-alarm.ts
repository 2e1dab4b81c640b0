/**
 * An ExpertSession has one alarm (a Durable Object has one) for four jobs, each with its own
 * next due time: flushing the run index outbox (about a second after a run ends), MCP tasks
 * (running ones keep the object alive; ones a restart cut off are run again), runs in flight
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

/** Brings the alarm forward to `at` when it is unset or later; never puts it off. */
export async function alarmNoLaterThan(storage: DurableObjectStorage, at: number): Promise<void> {
  const current = await storage.getAlarm();
  if (current === null || current > at) await storage.setAlarm(at);
}

/** Sets the alarm to `at`, or deletes it when nothing is due. */
export async function setOrClearAlarm(storage: DurableObjectStorage, at: number | null): Promise<void> {
  if (at === null) await storage.deleteAlarm();
  else await storage.setAlarm(at);
}
