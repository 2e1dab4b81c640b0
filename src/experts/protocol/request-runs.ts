import { log } from "../../observability/logger";
import type { CancelByRequestOutcome, McpRequestRef } from "../core/call-types";

/**
 * The session's runs in flight by the MCP request that started them, for a client's
 * `notifications/cancelled`, which names its JSON-RPC request, not our run. A request id is
 * unique per client session only, so the key is both (see requestKey).
 */
export class RequestRuns {
  private readonly byRequest = new Map<string, Set<string>>();
  private readonly keyOf = new Map<string, string>();

  /** From the run's start to its end (`ended`); a run no MCP request started is not kept. */
  started(runId: string, ref: McpRequestRef | undefined): void {
    if (ref === undefined) return;
    const key = requestKey(ref);
    this.keyOf.set(runId, key);
    this.byRequest.set(key, (this.byRequest.get(key) ?? new Set()).add(runId));
  }

  ended(runId: string): void {
    const key = this.keyOf.get(runId);
    if (key === undefined) return;
    this.keyOf.delete(runId);
    const runs = this.byRequest.get(key);
    runs?.delete(runId);
    if (runs?.size === 0) this.byRequest.delete(key);
  }

  /**
   * The session belongs to the caller (tenant, skill and user), so a cancel can only ever reach
   * the caller's own runs. Within them, a request id is unique per client session only: two
   * clients of the same user without a session id to tell them apart (stateless 2025 Streamable
   * HTTP issues none) may both have request 5 in flight. Then the cancel is ambiguous and aborts
   * nothing, because stopping the wrong one of the user's runs is worse than letting the right
   * one finish; it is logged. A cancel that overtakes its own call (before the run started here)
   * finds nothing, which the spec allows: a receiver may ignore a cancel for a request it does
   * not know.
   */
  cancel(ref: McpRequestRef, cancelRun: (runId: string) => boolean): CancelByRequestOutcome {
    const runIds = [...(this.byRequest.get(requestKey(ref)) ?? [])];
    if (runIds.length > 1) {
      log("warn", "ambiguous cancel: several runs share the request id", { requestId: ref.requestId, runs: runIds.length });
      return "ambiguous";
    }
    const [runId] = runIds;
    if (runId === undefined) return "not_found";
    return cancelRun(runId) ? "cancelled" : "not_found";
  }
}

/** Request ids 1 and "1" are different JSON-RPC ids, so the key keeps the type. */
function requestKey(ref: McpRequestRef): string {
  return JSON.stringify([ref.clientSessionId ?? null, ref.requestId]);
}
