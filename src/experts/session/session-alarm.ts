/**
 * A Durable Object has one alarm, and the session's parts (retention, tasks, …) each have their
 * own next due time: the alarm is set to the earliest, and the handler calls every part, each
 * doing what is due and ignoring the rest.
 */
export async function armEarliest(storage: DurableObjectStorage, dues: ReadonlyArray<number | null>): Promise<void> {
  const due = dues.filter((at): at is number => at !== null);
  if (due.length === 0) await storage.deleteAlarm();
  else await storage.setAlarm(Math.min(...due));
}

/** Brings the alarm forward to `due` when it is set later (or not at all); never pushes it back. */
export async function alarmNoLaterThan(storage: DurableObjectStorage, due: number): Promise<void> {
  const current = await storage.getAlarm();
  if (current === null || current > due) await storage.setAlarm(due);
}
