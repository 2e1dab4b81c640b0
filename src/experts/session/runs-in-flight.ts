import { log } from "../../observability/logger";
import type { CancelByRequestOutcome, McpRequestRef } from "../core/call-types";

/** How long after a run's timeout the alarm looks for it: the runner's own end (abort, synthesis, record) comes first. */
export const IN_FLIGHT_GRACE_MS = 5_000;

/** A run this instance is running: how to cancel it, and when it should have ended (its budget's timeout). */
interface InFlightRun {
  controller: AbortController;
  startedAt: number;
  timeoutMs: number;
  /** The MCP request that started it (see requestKey), for a cancel that names the request. */
  requestKey: string | undefined;
}

/**
 * The runs this session instance is running, in memory only (a restart ends them all; the
 * constructor closes their records as interrupted): each from `begin` to `end`, found by run id
 * for `cancel`, or by the MCP request that started it for `cancelRequest`.
 */
export class RunsInFlight {
  private readonly runs = new Map<string, InFlightRun>();
  /** Runs by the MCP request that started them: a request id is unique per connection only. */
  private readonly byRequest = new Map<string, Set<string>>();

  /** Registers a run; its signal aborts on `cancel`. */
  begin(runId: string, run: { startedAt: number; timeoutMs: number; mcpRequest?: McpRequestRef | undefined }): AbortSignal {
    const controller = new AbortController();
    const key = run.mcpRequest ? requestKey(run.mcpRequest) : undefined;
    this.runs.set(runId, { controller, startedAt: run.startedAt, timeoutMs: run.timeoutMs, requestKey: key });
    if (key !== undefined) this.byRequest.set(key, (this.byRequest.get(key) ?? new Set()).add(runId));
    return controller.signal;
  }

  end(runId: string): void {
    const key = this.runs.get(runId)?.requestKey;
    this.runs.delete(runId);
    if (key === undefined) return;
    const runs = this.byRequest.get(key);
    runs?.delete(runId);
    if (runs?.size === 0) this.byRequest.delete(key);
  }

  cancel(runId: string): boolean {
    const controller = this.runs.get(runId)?.controller;
    controller?.abort(new DOMException("The client cancelled the expert call.", "AbortError"));
    return controller !== undefined;
  }

  /**
   * A client's `notifications/cancelled` names its JSON-RPC request, not our run. The session
   * belongs to the caller (tenant, skill and user), so a cancel can only ever reach the caller's
   * own runs. Within them, a request id is unique per connection only: two connections of the
   * same user without a session id to tell them apart (stateless 2025 Streamable HTTP issues
   * none) may both have request 5 in flight. Then the cancel is ambiguous and aborts nothing,
   * because stopping the wrong one of the user's runs is worse than letting the right one
   * finish; it is logged. A cancel that overtakes its own call (before the run started here)
   * finds nothing, which the spec allows: a receiver may ignore a cancel for a request it does
   * not know.
   */
  cancelRequest(ref: McpRequestRef): CancelByRequestOutcome {
    const runIds = [...(this.byRequest.get(requestKey(ref)) ?? [])];
    if (runIds.length > 1) {
      log("warn", "ambiguous cancel: several runs share the request id", { requestId: ref.requestId, runs: runIds.length });
      return "ambiguous";
    }
    const [runId] = runIds;
    if (runId === undefined) return "not_found";
    return this.cancel(runId) ? "cancelled" : "not_found";
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

/** Request ids 1 and "1" are different JSON-RPC ids, so the key keeps the type. */
function requestKey(ref: McpRequestRef): string {
  return JSON.stringify([ref.connection ?? null, ref.requestId]);
}
