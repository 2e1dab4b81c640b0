import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { ExpertSession } from "../../../src/experts/session/expert-session";
import { SessionListeners } from "../../../src/experts/session/session-listeners";
import { sessionOf } from "../../support/workers/session-helpers";

const skill = "listen-cost";
const ROUNDS = 20_000;

/**
 * What listening adds to a run's path when nobody listens: one `getWebSockets` per run start and
 * per task status change (session-listeners.ts). workerd's clock moves only across I/O, so each
 * figure is a loop of ROUNDS signals closed by one storage read, less the same read alone.
 */
describe("the cost of listen signals on a run's path", () => {
  it("with no listen socket open, a signal is a getWebSockets call and nothing is sent", async () => {
    const session = sessionOf(skill);
    const figures = await runInDurableObject(session, async (_instance: ExpertSession, state) => {
      const listeners = new SessionListeners(state, () => true);
      const timed = async (work: () => void) => {
        const start = Date.now();
        work();
        await state.storage.get("cost-probe");
        return Date.now() - start;
      };
      // Warm up, then the storage read alone as the baseline.
      await timed(() => listeners.runsChanged());
      const baseline = Math.min(await timed(() => {}), await timed(() => {}), await timed(() => {}));
      const loops: number[] = [];
      for (let i = 0; i < 3; i++) {
        loops.push(
          await timed(() => {
            for (let n = 0; n < ROUNDS; n++) {
              listeners.runsChanged();
              listeners.taskChanged("t");
            }
          }),
        );
      }
      return { baseline, best: Math.min(...loops), sockets: state.getWebSockets().length };
    });
    const perSignalUs = ((figures.best - figures.baseline) * 1000) / (2 * ROUNDS);
    console.log(
      `listen signal with no socket open: ${perSignalUs.toFixed(3)} µs each (${2 * ROUNDS} signals in ${figures.best} ms, read alone ${figures.baseline} ms)`,
    );
    expect(figures.sockets).toBe(0);
    // A bound loose enough for a loaded machine; the figure is what the docs quote.
    expect(perSignalUs).toBeLessThan(50);
  });
});
