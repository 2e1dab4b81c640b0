import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { ExpertSession } from "../../../src/experts/session/expert-session";
import { SessionListeners } from "../../../src/experts/protocol/session-listeners";
import { sessionOf } from "../../support/workers/session-helpers";

const skill = "listen-cost";

/**
 * What listening adds to a run's path when nobody listens (session-listeners.ts): the signals
 * touch the object's state only to ask for its listen sockets. No storage operation, no RPC, no
 * event built; what that costs in time is the bench's to measure, not a test's.
 */
describe("listen signals on a run's path", () => {
  it("with no listen socket open, a signal asks for the sockets and touches nothing else of the object's state", async () => {
    const session = sessionOf(skill);
    const touched = await runInDurableObject(session, async (_instance: ExpertSession, state) => {
      const seen: string[] = [];
      const recording = new Proxy(state, {
        get(target, key) {
          seen.push(String(key));
          const value: unknown = Reflect.get(target, key);
          return typeof value === "function" ? value.bind(target) : value;
        },
      });
      const listeners = new SessionListeners(recording, () => true);
      for (let n = 0; n < 100; n++) {
        listeners.runsChanged();
        listeners.taskChanged(`t-${n}`);
      }
      return { seen: [...new Set(seen)], sockets: state.getWebSockets().length };
    });
    expect(touched.sockets).toBe(0);
    expect(touched.seen).toEqual(["getWebSockets"]);
  });
});
