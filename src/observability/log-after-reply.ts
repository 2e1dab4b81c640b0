import { log, type LogLevel } from "./logger";

/**
 * Writes a Durable Object's log line once its reply has left. console.log is synchronous, and
 * under `wrangler dev` each line is forwarded to the dev server at a cost of milliseconds, so a
 * line written before `return` delays every answer by that much. No timer: a pending timer
 * outlives a test in the workers test pool and keeps the test run from exiting.
 * `storage.sync()` settles once this object's writes are durable, which is when its output gate
 * lets the RPC reply go; the line follows, in call order (sync promises settle in order), with
 * the fields it had at the call. waitUntil keeps the object alive until it is written.
 */
export function logAfterReply(state: DurableObjectState, level: LogLevel, message: string, fields: Record<string, unknown>): void {
  const write = () => log(level, message, fields);
  state.waitUntil(state.storage.sync().then(write, write));
}
