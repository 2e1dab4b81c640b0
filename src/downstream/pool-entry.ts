import type { DownstreamServerConfig } from "../catalog/catalog-schema";
import { backoffDelayMs, type BackoffPolicy } from "./connection-backoff";
import type { DownstreamConnection } from "./connect-downstream";
import type { ConnectionState, DownstreamTool } from "./downstream-types";
import type { CachedToolList } from "./tool-list-cache";
import type { TokenSource } from "./connections/token-source";

/** Everything the pool holds for one server. Resolved secrets live only inside `connection`. */
export interface PoolEntry {
  readonly serverId: string;
  readonly config: DownstreamServerConfig;
  state: ConnectionState;
  /** Consecutive failed connects or dropped connections; reset by a successful connect. */
  failures: number;
  connection?: DownstreamConnection;
  /** The one in-flight connect that concurrent callers share. */
  connecting?: Promise<DownstreamConnection>;
  /** In-memory tool list: a warm call neither lists again nor reads KV. */
  tools?: CachedToolList;
  /** The one in-flight listing that concurrent callers share. */
  listing?: Promise<readonly DownstreamTool[]>;
  /** For a server with `auth`: the member's token, memoised briefly (connections/token-source.ts). */
  tokens?: TokenSource;
  /** When the latest failure was recorded: a recovery mark (server-recovery.ts) counts only if newer. */
  failedAt?: number;
  /** The back-off was ended by another session's recovery mark: this session's success need not be announced again. */
  endedByMark?: boolean;
  /** The one in-flight read of the recovery mark that calls during a back-off share. */
  markRead?: Promise<number | undefined>;
}

export function newPoolEntry(serverId: string, config: DownstreamServerConfig): PoolEntry {
  return { serverId, config, state: { status: "idle" }, failures: 0 };
}

export function markReady(entry: PoolEntry, connection: DownstreamConnection, now: number): void {
  entry.connection = connection;
  entry.failures = 0;
  entry.state = {
    status: "ready",
    since: now,
    transport: connection.transport,
    ...(connection.protocolVersion === undefined ? {} : { protocolVersion: connection.protocolVersion }),
  };
}

/** Record a failure: `failed` (the next call retries) or `backing-off` (retries withheld until). */
export function markFailed(entry: PoolEntry, reason: string, now: number, policy: BackoffPolicy): void {
  entry.connection = undefined;
  entry.failures += 1;
  entry.failedAt = now;
  entry.endedByMark = false;
  const delay = backoffDelayMs(entry.failures, policy);
  entry.state =
    delay > 0
      ? { status: "backing-off", until: now + delay, error: reason, attempts: entry.failures }
      : { status: "failed", since: now, error: reason, attempts: entry.failures };
}

/** The state health reports: a back-off whose time is up is a plain failure awaiting a retry. */
export function reportedState(entry: PoolEntry, now: number): ConnectionState {
  const { state } = entry;
  if (state.status === "backing-off" && state.until <= now) {
    return { status: "failed", since: state.until, error: state.error, attempts: state.attempts };
  }
  return state;
}
