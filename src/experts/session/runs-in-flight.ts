import { IN_FLIGHT_GRACE_MS } from "../core/run-deadline";

/** A run this instance is running: how to cancel it, and when it should have ended (its budget's timeout). */
interface InFlightRun {
  controller: AbortController;
  startedAt: number;
  timeoutMs: number;
}

/**
 * The runs this session instance is running, in memory only (a restart ends them all; the
 * constructor closes their records as interrupted): each from `begin` to `end`, found by run id
 * for `cancel` (a cancel by the MCP request that started it finds the run id in the protocol
 * wing, request-runs.ts).
 */
export class RunsInFlight {
  private readonly runs = new Map<string, InFlightRun>();

  /** Registers a run; its signal aborts on `cancel`. */
  begin(runId: string, run: { startedAt: number; timeoutMs: number }): AbortSignal {
    const controller = new AbortController();
    this.runs.set(runId, { controller, startedAt: run.startedAt, timeoutMs: run.timeoutMs });
    return controller.signal;
  }

  end(runId: string): void {
    this.runs.delete(runId);
  }

  cancel(runId: string): boolean {
    const controller = this.runs.get(runId)?.controller;
    controller?.abort(new DOMException("The client cancelled the expert call.", "AbortError"));
    return controller !== undefined;
  }

  /**
   * When the alarm should look again while runs are in flight: just after the first one's
   * timeout, by which it has ended unless a restart cut it off (and then the fresh instance this
   * alarm wakes indexes it). A run still going past its timeout (a slow abort) is looked at again
   * a timeout later.
   */
  nextCheck(now: number): number | null {
    let due: number | null = null;
    for (const run of this.runs.values()) {
      const deadline = run.startedAt + run.timeoutMs + IN_FLIGHT_GRACE_MS;
      const check = deadline > now ? deadline : now + run.timeoutMs;
      due = due === null ? check : Math.min(due, check);
    }
    return due;
  }
}
