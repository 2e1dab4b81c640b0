import { env, runDurableObjectAlarm } from "cloudflare:test";
import { expect } from "vitest";
import { setRunIndexFlushDelayForTests } from "../../../src/experts/records/run-index-outbox";

/**
 * In the workers tests the run index outbox's flush is due an hour after a run, not a second:
 * only an alarm a test runs itself (`flushRunIndex`) writes the index, so no real alarm fires
 * while a test looks at its rows or restarts objects. Set for every workers test file by
 * test/hold-run-index-flush.ts (vitest.config.ts setupFiles); the real delay is proven end to
 * end (test/e2e/run-index.e2e.test.ts) through `wrangler dev`.
 */
export const TEST_FLUSH_DELAY_MS = 3_600_000;

export function holdRunIndexFlushForTests(): void {
  setRunIndexFlushDelayForTests(TEST_FLUSH_DELAY_MS);
}

/** Runs the session's alarm now, which flushes its run index outbox (and runs the retention purge). */
export async function flushRunIndex(session: DurableObjectStub): Promise<void> {
  expect(await runDurableObjectAlarm(session), "the session has an alarm set").toBe(true);
}

/** Takes a D1 table out of the way, so every index batch fails as it would with D1 unavailable. */
export async function withoutTable<T>(table: string, body: () => Promise<T>): Promise<T> {
  await env.DB.exec(`ALTER TABLE ${table} RENAME TO ${table}_away`);
  try {
    return await body();
  } finally {
    await env.DB.exec(`ALTER TABLE ${table}_away RENAME TO ${table}`);
  }
}
