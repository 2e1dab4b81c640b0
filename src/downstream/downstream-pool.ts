import { currentRunTrace, traceMeta } from "./trace-context";
import type { CallToolResult } from "@modelcontextprotocol/client";
import type { DownstreamServerConfig } from "../catalog/catalog-schema";
import { untilAborted } from "./abortable";
import { classifyCallFailure } from "./call-failure";
import { checkAndRecordListing } from "./checked-listing";
import { connectDownstream, connectionRequired, type DownstreamConnection } from "./connect-downstream";
import { connectionAccountKey, connectionTarget, ownerFor, serverKey } from "./connections/connection-target";
import { connectionTokenSource, type TokenSource } from "./connections/token-source";
import type { ConnectionRequiredError } from "./connections/connection-errors";
import { defaultBackoff, type BackoffPolicy } from "./connection-backoff";
import { DownstreamCallAbortedError, DownstreamUnavailableError, UnknownDownstreamServerError } from "./downstream-errors";
import { toDownstreamTool } from "./downstream-tool-schema";
import type { ConnectionState, DownstreamTool, ToolCallOptions, ToolSource, WithheldTool } from "./downstream-types";
import { markFailed, markReady, newPoolEntry, reportedState, type PoolEntry } from "./pool-entry";
import { redactDeep } from "./secret-headers";
import { ServerRecoveryBoard } from "./server-recovery";
import { isExpiredSession } from "./transport-failure";
import { ToolListCache, toolListTtlMs } from "./tool-list-cache";
import { ToolWithheldError } from "./tool-pin-errors";
import type { PinDatabase } from "./tool-pins";

export interface DownstreamPoolOptions {
  env: Env;
  skill: string;
  servers: Readonly<Record<string, DownstreamServerConfig>>;
  /** Where tool lists are cached; defaults to env.CACHE. */
  cache?: KVNamespace;
  backoff?: BackoffPolicy;
  now?: () => number;
  /** Where tool definitions are pinned (tool-pins.ts); defaults to env.DB. `false` turns pinning off. */
  toolPins?: PinDatabase | false;
  /** The member whose session this is: servers with `auth` are reached with their connection's token. */
  userId?: string;
  /** Test seam: where a server's token comes from (default: the member's UserConnections object). */
  tokenSource?: (serverId: string, config: DownstreamServerConfig) => TokenSource | undefined;
  /** The id (hex) of the ExpertSession that owns this pool: its token memos are dropped when a connection is removed (token-source.ts). */
  tokenHolder?: string;
}

/**
 * The ToolSource of one skill inside an ExpertSession: one warm MCP client per downstream
 * server, connected on first use. A server that fails affects only its own calls
 * (docs/architecture.md#dead-servers); the others keep working. Not safe to share across skills: caches are keyed by skill.
 */
export class DownstreamPool implements ToolSource {
  private readonly entries = new Map<string, PoolEntry>();
  private readonly toolCache: ToolListCache;
  private readonly recovery: ServerRecoveryBoard;
  private readonly backoff: BackoffPolicy;
  private readonly now: () => number;
  private readonly pins: PinDatabase | undefined;
  private closed = false;

  constructor(private readonly options: DownstreamPoolOptions) {
    this.now = options.now ?? Date.now;
    this.backoff = options.backoff ?? defaultBackoff(options.env);
    this.pins = options.toolPins === false ? undefined : (options.toolPins ?? options.env.DB);
    this.toolCache = new ToolListCache(options.cache ?? options.env.CACHE, options.skill, this.now);
    this.recovery = new ServerRecoveryBoard(options.cache ?? options.env.CACHE, options.skill);
    for (const [serverId, config] of Object.entries(options.servers)) {
      this.entries.set(serverId, newPoolEntry(serverId, config));
    }
  }

  /** The skill whose servers these are (ToolSource.skill). */
  get skill(): string {
    return this.options.skill;
  }

  async listTools(serverId: string, options?: ToolCallOptions): Promise<readonly DownstreamTool[]> {
    const entry = this.entry(serverId);
    if (entry.tools !== undefined && entry.tools.expiresAt > this.now()) return entry.tools.tools;
    if (entry.listing === undefined) {
      const listing = this.refreshTools(entry).finally(() => {
        if (entry.listing === listing) entry.listing = undefined;
      });
      listing.catch(() => undefined); // awaited by callers; this only silences a listing all of them abandoned
      entry.listing = listing;
    }
    return untilAborted(entry.listing, options?.signal, () => new DownstreamCallAbortedError(serverId, "tools/list"));
  }

  async callTool(serverId: string, toolName: string, args: Record<string, unknown>, options?: ToolCallOptions): Promise<CallToolResult> {
    const entry = this.entry(serverId);
    const signal = options?.signal;
    if (this.pins !== undefined) await this.refuseWithheld(entry, toolName, signal);
    // The run's trace context rides in `_meta` too (SEP-414), for servers that read it there rather than from the header.
    const trace = currentRunTrace();
    const params = { name: toolName, arguments: args, ...(trace === undefined ? {} : { _meta: traceMeta(trace) }) };
    const result = await this.request(entry, toolName, signal, (connection) =>
      connection.client.callTool(params, { timeout: entry.config.call_timeout_ms, ...(signal === undefined ? {} : { signal }) }),
    );
    // What the model reads may reach the orchestrator: a server echoing our credentials must not leak them.
    return redactDeep(result.value, result.connection.redact);
  }

  /**
   * For a server with `auth`: why the session's member cannot reach it yet (no connection, or a
   * refresh failed), or undefined when a token is at hand. Other servers: always undefined.
   */
  async connectionNeeded(serverId: string): Promise<ConnectionRequiredError | undefined> {
    const tokens = this.tokensFor(this.entry(serverId));
    if (tokens === undefined) return undefined;
    try {
      await tokens.token();
      return undefined;
    } catch (error) {
      const needed = connectionRequired(error);
      if (needed) return needed;
      throw error;
    }
  }

  /** Tools the server's latest listing withheld (changed since pinned); listTools first. */
  withheldTools(serverId: string): readonly WithheldTool[] {
    return this.entry(serverId).tools?.withheld ?? [];
  }

  /** Drops the memoised tokens of servers at these connection keys (their connections were removed). */
  forgetTokens(serverKeys: readonly string[]): void {
    const removed = new Set(serverKeys);
    for (const entry of this.entries.values()) {
      if (entry.config.url !== undefined && removed.has(serverKey(entry.config.url))) entry.tokens?.forget?.();
    }
  }

  /** Per-server connection state for health; servers never used are "idle". */
  states(): Record<string, ConnectionState> {
    const now = this.now();
    return Object.fromEntries([...this.entries].map(([serverId, entry]) => [serverId, reportedState(entry, now)]));
  }

  async close(): Promise<void> {
    this.closed = true;
    const open: DownstreamConnection[] = [];
    for (const entry of this.entries.values()) {
      if (entry.connection !== undefined) open.push(entry.connection);
      entry.connection = undefined;
      entry.state = { status: "idle" };
    }
    await Promise.all(open.map((connection) => connection.close()));
  }

  private entry(serverId: string): PoolEntry {
    const entry = this.entries.get(serverId);
    if (entry === undefined) throw new UnknownDownstreamServerError(this.options.skill, serverId);
    return entry;
  }

  private async refreshTools(entry: PoolEntry): Promise<readonly DownstreamTool[]> {
    const scope = this.cacheScope(entry);
    const known = scope.shared ? await this.toolCache.known(entry.serverId, entry.config, scope.actingAs) : undefined;
    if (known !== undefined && known.expiresAt > this.now()) {
      entry.tools = known;
      return known.tools;
    }
    const { value: result, connection } = await this.request(entry, "tools/list", undefined, (live) =>
      live.client.listTools(undefined, { timeout: entry.config.call_timeout_ms, cacheMode: "refresh" }),
    );
    // A hostile server could echo our credentials into a description; nothing cached may hold them.
    const tools = result.tools.map((tool) => toDownstreamTool(redactDeep(tool, connection.redact))).filter((tool): tool is DownstreamTool => tool !== null);
    const ttlMs = toolListTtlMs(entry.config, Reflect.get(result, "ttlMs"));
    // Pins are checked here, on the cold path only: both caches hold the checked list, so a warm call costs nothing.
    const fresh = { skill: this.options.skill, serverId: entry.serverId, config: entry.config, tools, ttlMs, known, now: this.now() };
    entry.tools = await checkAndRecordListing(fresh, this.pins, this.toolCache, scope.shared ? { actingAs: scope.actingAs } : undefined);
    return entry.tools.tools;
  }

  /**
   * Whose listing a server's KV entry is. A server without `auth` lists the same tools to
   * everyone: one entry per skill. A server with `auth` answers as the account whose token it
   * got, and may list different tools to different accounts: one entry per member (or the team,
   * connection "team"). When the account is not known (a test's token source without a member),
   * the listing stays in this pool's memory only.
   */
  private cacheScope(entry: PoolEntry): { shared: true; actingAs?: string } | { shared: false } {
    const auth = entry.config.auth;
    if (auth === undefined) return { shared: true };
    if (auth.connection === "team") return { shared: true, actingAs: connectionAccountKey({ kind: "team" }) };
    const userId = this.options.userId;
    return userId === undefined ? { shared: false } : { shared: true, actingAs: connectionAccountKey(ownerFor(auth, userId)) };
  }

  /**
   * Defence in depth (the runner only offers listed tools): a tool withheld at the latest listing
   * is refused here too, e.g. when a re-listing mid-run found it changed. A pool that has not
   * listed the server yet lists it first, so no call skips the pin check.
   */
  private async refuseWithheld(entry: PoolEntry, toolName: string, signal: AbortSignal | undefined): Promise<void> {
    if (entry.tools === undefined) await this.listTools(entry.serverId, signal === undefined ? undefined : { signal });
    const withheld = entry.tools?.withheld.find((tool) => tool.name === toolName);
    if (withheld !== undefined) throw new ToolWithheldError(this.options.skill, entry.serverId, toolName, withheld.reason);
  }

  /**
   * Run one request on the server's connection. A session the server has forgotten (HTTP 404
   * on a stateful server, after its restart or session timeout) is re-initialised once and the
   * request sent again; the server never ran it, so the retry cannot do anything twice.
   */
  private async request<T>(
    entry: PoolEntry,
    target: string,
    signal: AbortSignal | undefined,
    run: (connection: DownstreamConnection) => Promise<T>,
  ): Promise<{ value: T; connection: DownstreamConnection }> {
    const connection = await this.connection(entry, signal, target);
    try {
      return { value: await run(connection), connection };
    } catch (error) {
      if (!isExpiredSession(error, connection.sessionId() !== undefined) || signal?.aborted) {
        throw this.failure(entry, connection, target, error, signal);
      }
      this.discard(entry, connection);
    }
    const fresh = await this.connection(entry, signal, target);
    try {
      return { value: await run(fresh), connection: fresh };
    } catch (error) {
      throw this.failure(entry, fresh, target, error, signal);
    }
  }

  /** Forget a connection without counting a failure (the server is fine; our session is not). */
  private discard(entry: PoolEntry, connection: DownstreamConnection): void {
    if (entry.connection !== connection) return;
    entry.connection = undefined;
    entry.state = { status: "idle" };
    void connection.close();
  }

  /** The warm connection, or the shared in-flight connect, or a new connect (unless backing off). */
  private connection(entry: PoolEntry, signal: AbortSignal | undefined, target: string): Promise<DownstreamConnection> {
    const aborted = () => new DownstreamCallAbortedError(entry.serverId, target);
    if (signal?.aborted) return Promise.reject(aborted());
    if (entry.connection !== undefined) return Promise.resolve(entry.connection);
    if (this.closed) return Promise.reject(new DownstreamUnavailableError(entry.serverId, "the session is shutting down"));
    if (entry.connecting === undefined) {
      const { state } = entry;
      if (state.status === "backing-off" && state.until > this.now()) return this.unlessBackAlready(entry, state, signal, target);
    }
    return untilAborted(entry.connecting ?? this.startConnect(entry), signal, aborted);
  }

  private startConnect(entry: PoolEntry): Promise<DownstreamConnection> {
    const connecting = this.connect(entry).finally(() => {
      if (entry.connecting === connecting) entry.connecting = undefined;
    });
    connecting.catch(() => undefined); // see listTools
    entry.connecting = connecting;
    return connecting;
  }

  /**
   * A session backing off from a server asks, before refusing the call, whether the server has
   * answered another session of the skill (or a health probe) since this one's failure: each
   * user's session backs off on its own, and without this every one of them waited its own
   * back-off out after the server was back. Only a session already backing off reads the mark;
   * a healthy call never does.
   */
  private async unlessBackAlready(
    entry: PoolEntry,
    backingOff: Extract<ConnectionState, { status: "backing-off" }>,
    signal: AbortSignal | undefined,
    target: string,
  ): Promise<DownstreamConnection> {
    const aborted = () => new DownstreamCallAbortedError(entry.serverId, target);
    if (entry.markRead === undefined) {
      const read = this.recovery.backSince(entry.serverId, entry.config).finally(() => {
        if (entry.markRead === read) entry.markRead = undefined;
      });
      entry.markRead = read;
    }
    const backSince = await untilAborted(entry.markRead, signal, aborted);
    if (entry.state === backingOff && backSince !== undefined && backSince > (entry.failedAt ?? Number.POSITIVE_INFINITY)) {
      entry.state = { status: "failed", since: entry.failedAt ?? backSince, error: backingOff.error, attempts: backingOff.attempts };
      entry.endedByMark = true;
    }
    const { state } = entry;
    const now = this.now();
    if (entry.connection !== undefined) return entry.connection;
    if (entry.connecting === undefined && state.status === "backing-off" && state.until > now) {
      const seconds = Math.ceil((state.until - now) / 1000);
      throw new DownstreamUnavailableError(entry.serverId, `${state.error} (next attempt in ${seconds} s)`);
    }
    return untilAborted(entry.connecting ?? this.startConnect(entry), signal, aborted);
  }

  private async connect(entry: PoolEntry): Promise<DownstreamConnection> {
    entry.state = { status: "connecting", since: this.now() };
    try {
      const connection = await connectDownstream(entry.serverId, entry.config, this.options.env, this.tokensFor(entry));
      if (this.closed) {
        await connection.close();
        throw new DownstreamUnavailableError(entry.serverId, "the session is shutting down");
      }
      // Back after failures: the skill's other sessions backing off from it may retry now (unless a
      // mark told us). Awaited, on this recovering call only: once its answer is out, the mark is.
      if (entry.failures > 0 && !entry.endedByMark) await this.recovery.announce(entry.serverId, entry.config, this.now());
      markReady(entry, connection, this.now());
      // A legacy SSE stream that drops closes the client; the next call then reconnects.
      connection.client.onclose = () => {
        if (entry.connection === connection) markFailed(entry, "the connection closed", this.now(), this.backoff);
      };
      return connection;
    } catch (error) {
      // A missing connection is the member's to fix, not the server's failure: no back-off, so the call after connecting goes through.
      const needsConnection = connectionRequired(error);
      if (needsConnection) {
        entry.state = { status: "idle" };
        throw needsConnection;
      }
      const failure = error instanceof DownstreamUnavailableError ? error : new DownstreamUnavailableError(entry.serverId, String(error));
      if (!this.closed) markFailed(entry, failure.reason, this.now(), this.backoff);
      throw failure;
    }
  }

  /** The token source of a server with `auth`: the session member's (or team's) connection. */
  private tokensFor(entry: PoolEntry): TokenSource | undefined {
    if (entry.config.auth === undefined) return undefined;
    if (this.options.tokenSource) return this.options.tokenSource(entry.serverId, entry.config);
    const target = connectionTarget(this.options.skill, entry.serverId, entry.config);
    if (target === undefined || this.options.userId === undefined) return undefined;
    const holder = this.options.tokenHolder;
    entry.tokens ??= connectionTokenSource(this.options.env, target, this.options.userId, holder === undefined ? {} : { holder });
    return entry.tokens;
  }

  private failure(entry: PoolEntry, connection: DownstreamConnection, target: string, error: unknown, signal: AbortSignal | undefined): Error {
    const needsConnection = connectionRequired(error);
    if (needsConnection) {
      // The server refused the token even after a refresh: forget the connection, keep no back-off.
      if (entry.connection === connection) this.discard(entry, connection);
      return needsConnection;
    }
    const failure = classifyCallFailure(error, {
      serverId: entry.serverId,
      target,
      timeoutMs: entry.config.call_timeout_ms,
      maxResponseBytes: entry.config.max_response_bytes,
      signal,
      redact: connection.redact,
    });
    if (failure instanceof DownstreamUnavailableError && entry.connection === connection) {
      markFailed(entry, failure.reason, this.now(), this.backoff);
      void connection.close();
    }
    return failure;
  }
}
