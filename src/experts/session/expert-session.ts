import { DurableObject } from "cloudflare:workers";
import type { SkillConfig } from "../../catalog/catalog-schema";
import { DownstreamPool } from "../../downstream/downstream-pool";
import type { ConnectionState } from "../../downstream/downstream-types";
import type { CancelByRequestOutcome, ExpertCallRequest, ExpertCallResult, McpRequestRef, ProgressReporter, UserPrompter } from "../core/call-types";
import type { StepRecord } from "../core/run-types";
import { expertOfCall } from "../evals/eval-call";
import { objectEnv } from "../limits/d1-call-path-seam";
import { SessionLimits } from "../limits/session-limits";
import type { CounterRow } from "../limits/usage-counters";
import { LivePublisher } from "../live/live-publisher";
import { startLiveRun } from "../live/live-run";
import type { ClientReply } from "../protocol/client-replies";
import type { OpenedRequestState, RequestStateFields } from "../protocol/request-states";
import { FIRST_READER, type StreamReplay } from "../protocol/resumable-streams";
import { SessionProtocol } from "../protocol/session-protocol";
import type { TaskInputReply } from "../protocol/session-tasks";
import type { StoredTask, TaskGeneration, TaskOutcome } from "../protocol/task-store";
import { RunTelemetry } from "../telemetry/run-telemetry";
import { RunIndexOutbox, runIndexFlushDelay } from "../records/run-index-outbox";
import { RunLog, type StoredRun } from "../records/run-log";
import { failedRun } from "../run/run-end";
import { redactedAnswer } from "../trace/redacted-answer";
import { finishRunTrace, interruptedIndexEntry, startRunTrace } from "../trace/session-run-trace";
import type { ConnectPrompter } from "./connection-gate";
import { type GatedRunEnd, runGated } from "./gated-run";
import { PausedRuns } from "./paused-runs";
import { RunsInFlight } from "./runs-in-flight";
import { AlarmSchedule, SessionAlarm } from "./session-alarm";
import { UnknownExpertError } from "./session-errors";
import { deleteRunRows, deleteThreadRows, listThreads, type PurgeCount, purgeSession, type ThreadSummary } from "./session-retention";
import { applySessionSchema } from "./session-schema";
import { ThreadStore } from "./thread-store";

/**
 * One user's session with one skill (named tenant:skill:user, see session/session-name.ts): warm
 * downstream clients, runs and threads. Runs are recorded here rather than in the Worker
 * because the Worker invocation is cancelled when the client disconnects; the Durable Object
 * carries on and the record is still written. The MCP protocol state (tasks, listen sockets,
 * resumable streams, client replies, cancels by request) is the protocol wing's SessionProtocol;
 * its RPC methods here only hand over.
 */
export class ExpertSession extends DurableObject<Env> {
  private readonly runs: RunLog;
  private readonly threads: ThreadStore;
  private readonly paused: PausedRuns;
  private pool: { key: string; pool: DownstreamPool } | null = null;
  private readonly inFlight = new RunsInFlight();
  private readonly protocol: SessionProtocol;
  /** Index rows of ended runs, written to D1 in batches by the alarm. */
  private readonly indexOutbox: RunIndexOutbox;
  private readonly live: LivePublisher;
  /** The one alarm and when its jobs are due (session-alarm.ts). */
  private readonly schedule: AlarmSchedule;
  /** The user's usage counters of this skill and the skill's SkillLimiter (session-limits.ts). */
  private readonly limits: SessionLimits;
  /** The run's spans to the tenant's OpenTelemetry collector, when it has one (telemetry/run-telemetry.ts). */
  private readonly telemetry: RunTelemetry;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, objectEnv(env));
    env = this.env;
    applySessionSchema(ctx.storage);
    this.limits = new SessionLimits(env, ctx);
    this.runs = new RunLog(ctx.storage.sql);
    this.threads = new ThreadStore(ctx.storage.sql);
    this.paused = new PausedRuns(ctx.storage.sql);
    this.schedule = new AlarmSchedule(new SessionAlarm(ctx.storage), {
      tasksDue: (now) => this.protocol.tasksDue(now),
      outboxDue: () => this.indexOutbox.dueAt(),
      inFlightCheck: (now) => this.inFlight.nextCheck(now),
      countersDirty: () => this.limits.dirty(),
      flushDelay: () => runIndexFlushDelay(env),
    });
    this.protocol = new SessionProtocol(ctx, {
      run: (request, onProgress) => this.callExpert(request, onProgress),
      cancel: (runId) => this.inFlight.cancel(runId),
      wakeAt: (due) => this.schedule.alarm.noLaterThan(due),
      runRecord: (runId) => this.runs.get(runId),
    });
    this.live = new LivePublisher(env, ctx);
    this.telemetry = new RunTelemetry(env, (work) => ctx.waitUntil(work));
    this.indexOutbox = new RunIndexOutbox(ctx.storage.sql, () => runIndexFlushDelay(env));
    // A fresh instance has no run in flight, so every "running" row was cut off by a restart;
    // each is closed and indexed as interrupted, and a task it ran fails saying so.
    const now = Date.now();
    const cutTasks = ctx.storage.transactionSync(() => {
      this.indexOutbox.add(
        this.runs.unfinished().map((run) => interruptedIndexEntry(run, now)),
        now,
      );
      this.runs.abandonUnfinished(now);
      return this.protocol.tasksInterrupted(now);
    });
    this.protocol.announceTasks(cutTasks);
    void this.schedule.armAtStart(now);
    void ctx.blockConcurrencyWhile(() => this.limits.releaseAbandoned());
  }

  /**
   * `askUser`, when the MCP surface can reach the client's user mid-call (elicitation), is
   * called for approvals and ask_user questions; without it such a run pauses instead.
   */
  async callExpert(request: ExpertCallRequest, onProgress?: ProgressReporter, askUser?: UserPrompter, onConnect?: ConnectPrompter): Promise<ExpertCallResult> {
    return this.protocol.streamed(request, onProgress, (reporter) => this.runCall(request, reporter, askUser, onConnect));
  }

  /**
   * The events of a resumable call's stream after event `after` (waiting up to `waitMs` for one)
   * for the response stream `reader` names (resumable-streams.ts); null when unknown here.
   */
  async resumeStream(streamId: string, after: number, waitMs: number, reader: string): Promise<StreamReplay | null> {
    return this.protocol.resumeStream(streamId, after, waitMs, reader);
  }

  /**
   * A resumable call's stream dropped (the first response, or the resumed one `reader` names).
   * The 2025 transport says a disconnect is no cancel, so the run goes on for a client that
   * reconnects with Last-Event-ID within `graceMs`; a client that does not has left, and the run
   * is cancelled as a disconnect always cancelled it. A response still reading the stream keeps it.
   */
  async streamDropped(streamId: string, graceMs: number, reader = FIRST_READER): Promise<void> {
    this.protocol.streamDropped(streamId, graceMs, reader);
  }

  /** One call's run, phase by phase: each phase is the module that owns it. */
  private async runCall(
    request: ExpertCallRequest,
    onProgress?: ProgressReporter,
    askUser?: UserPrompter,
    onConnect?: ConnectPrompter,
  ): Promise<ExpertCallResult> {
    const startedAt = Date.now();
    const found = await expertOfCall(this.env, request);
    if (!found) {
      const result = failedRun(new UnknownExpertError(request.skill, request.expert), startedAt);
      return { runId: request.runId, outcome: result.outcome, text: result.text, usage: result.usage };
    }
    const { skill, expert } = found;
    const limits = await this.limits.check(request, skill.config, startedAt);
    if ("refused" in limits) return limits.refused;

    // From here to the run row nothing awaits, so no other call sees the run half begun.
    const thread = this.threads.open(request.thread, expert.name, startedAt);
    const { threadId } = thread;
    const signal = this.inFlight.begin(request.runId, { startedAt, timeoutMs: expert.budget.timeout_ms });
    const trace = startRunTrace(this.env, request, skill.config, expert);
    this.runs.start(trace.runStart({ skill, threadId, startedAt }));
    this.protocol.runStarted(request.runId, request.mcpRequest);
    const inFlightAlarm = await this.schedule.runStarted(startedAt, expert.budget.timeout_ms, limits.reservation?.perUser === true);
    const live = startLiveRun(this.live, {
      runId: request.runId,
      skill: request.skill,
      expert: expert.name,
      user: request.user,
      startedAt,
      maxSteps: expert.budget.max_steps,
    });

    let ran: GatedRunEnd;
    try {
      const pool = () => this.poolFor(request.skill, skill.config, request.user.userId);
      ran = await runGated({
        env: this.env,
        request,
        skill,
        expert,
        startedAt,
        thread,
        paused: this.paused,
        pool,
        signal,
        trace,
        live,
        onProgress,
        askUser,
        onConnect,
      });
    } finally {
      this.inFlight.end(request.runId);
      this.protocol.runEnded(request.runId);
    }
    const { result, resumed, connect } = ran;
    this.limits.settle(request, limits.reservation, skill.config, expert, result.usage);

    const endedAt = Date.now();
    const stored = finishRunTrace(trace, result);
    this.runs.finish(request.runId, { ...result, steps: stored.steps, error: stored.error }, endedAt, stored.end);
    live.ended(result, stored.steps, endedAt);
    // Not a D1 write on the call's path: the alarm flushes the outbox in batches.
    const indexed = trace.indexEntry({ request, skill, expert, threadId, startedAt, endedAt, result, steps: stored.steps });
    this.indexOutbox.add([indexed], endedAt);
    // Nor the spans: built now, sent after the answer (run-telemetry.ts).
    this.telemetry.runEnded({ request, trace, expert, model: indexed.row.model, startedAt, endedAt, result, steps: stored.steps, cost: indexed.row.cost });
    await this.schedule.runEnded(inFlightAlarm, endedAt);
    const question = threadId === null ? undefined : this.paused.afterRun(threadId, request.runId, expert, result, resumed, endedAt);
    this.threads.afterRun(threadId, result, trace.redact, expert, endedAt);
    return redactedAnswer(trace, request, result, stored, { threadId, question, connect });
  }

  /** Only the MCP surface's listen sockets come in by fetch (listen-stream.ts). */
  override async fetch(request: Request): Promise<Response> {
    return this.protocol.accept(request);
  }

  override async webSocketMessage(ws: WebSocket, message: string | ArrayBuffer): Promise<void> {
    this.protocol.socketMessage(ws, message);
  }

  override async webSocketClose(ws: WebSocket, code: number, reason: string): Promise<void> {
    this.protocol.socketClosed(ws, code, reason);
  }

  /** The skill's limiter asks which of these runs still hold its slots: the others were cut off (slot-holders.ts). */
  async heldSlots(runIds: string[]): Promise<string[]> {
    return this.limits.heldSlots(runIds);
  }

  /** The user's counters of the day as they are now, for the admin's limits view (live-usage.ts). */
  async limitRow(subject: string, day: string): Promise<CounterRow> {
    return this.limits.row(subject, day);
  }

  /** Interleaves with a running callExpert (RPC calls to one object are not serialised across awaits). */
  async cancel(runId: string): Promise<boolean> {
    return this.inFlight.cancel(runId);
  }

  /** A client's `notifications/cancelled`, by the request it names (request-runs.ts). */
  async cancelRequest(ref: McpRequestRef): Promise<CancelByRequestOutcome> {
    return this.protocol.cancelRequest(ref);
  }

  /**
   * Waits for the client's reply to a request the MCP surface sent it on a stateless 2025 call's
   * stream (client-replies.ts); the reply arrives by `deliverClientReply` from another request.
   */
  async awaitClientReply(requestId: string, timeoutMs: number): Promise<ClientReply> {
    return this.protocol.awaitClientReply(requestId, timeoutMs);
  }

  /** A `requestState` handle for a 2026-07-28 answer that the client retries (request-states.ts). */
  async mintRequestState(expert: string, state: RequestStateFields): Promise<string> {
    return this.protocol.mintRequestState(expert, state);
  }

  /** The state a retry's `requestState` handle stands for, used once; or why it is refused. */
  async useRequestState(expert: string, handle: string): Promise<OpenedRequestState> {
    return this.protocol.useRequestState(expert, handle);
  }

  /** A client's reply to a request it was sent mid-call; false when no run here waits for it. */
  async deliverClientReply(requestId: string, reply: ClientReply): Promise<boolean> {
    return this.protocol.deliverClientReply(requestId, reply);
  }

  /** The member's own threads (newest first), for /me/api. */
  async threadList(limit = 50): Promise<ThreadSummary[]> {
    return listThreads(this.ctx.storage.sql, Math.min(Math.max(limit, 1), 200));
  }

  async deleteThread(threadId: string): Promise<boolean> {
    return this.ctx.storage.transactionSync(() => deleteThreadRows(this.ctx.storage.sql, threadId));
  }

  async deleteRun(runId: string): Promise<boolean> {
    return this.ctx.storage.transactionSync(() => deleteRunRows(this.ctx.storage.sql, runId));
  }

  /**
   * Deletes runs and threads older than the skill's `retention_days` as of `now` (and index rows
   * still waiting from that long ago, logged), then sets the next alarm for when the oldest
   * remaining row expires (at most a day away, so a shortened retention applies within a day) or
   * the waiting index rows are due, whichever is first; none while the session is empty.
   */
  async purgeExpired(now = Date.now()): Promise<PurgeCount> {
    const { purged, retentionDue } = await purgeSession(this.env, this.ctx, this.indexOutbox, now);
    await this.schedule.purged(retentionDue, now);
    return purged;
  }

  /**
   * Flushes the run index outbox, then purges (which sets the next alarm). While runs keep
   * ending, the alarm fires about once a second for the flush: the purge (which scans the runs
   * and turns) waits for its own time when this instance knows it.
   */
  override async alarm(): Promise<void> {
    this.schedule.alarm.fired();
    await this.limits.flush(this.env.DB);
    await this.indexOutbox.flush(this.env.DB);
    // Waiting for running tasks keeps the object alive; runs that end meanwhile (the tasks' own
    // among them) queue index rows, written right after.
    if ((await this.protocol.tasksOnAlarm()) > 0) await this.indexOutbox.flush(this.env.DB);
    const now = Date.now();
    if (await this.schedule.retentionWaits(now)) return;
    await this.purgeExpired(now);
  }

  /** Starts `request` as an MCP task and returns at once; the run goes on in this object (session-tasks.ts). */
  async startTask(
    taskId: string,
    request: ExpertCallRequest,
    structuredExpected: boolean,
    ttlMs: number,
    generation: TaskGeneration = "v1",
  ): Promise<StoredTask> {
    return this.protocol.startTask(taskId, request, structuredExpected, ttlMs, generation);
  }

  /** The user's reply to what a 2026-07-28 task waits for (tasks/update); false when it waits for no input keyed so. */
  async answerTask(taskId: string, key: string, reply: TaskInputReply): Promise<boolean> {
    return this.protocol.answerTask(taskId, key, reply);
  }

  async task(taskId: string): Promise<StoredTask | null> {
    return this.protocol.task(taskId);
  }

  async taskList(limit: number, after?: string): Promise<StoredTask[]> {
    return this.protocol.taskList(limit, after);
  }

  async taskOutcome(taskId: string, waitMs: number): Promise<TaskOutcome | null> {
    return this.protocol.taskOutcome(taskId, waitMs);
  }

  async cancelTask(taskId: string): Promise<StoredTask | null> {
    return this.protocol.cancelTask(taskId);
  }

  async run(runId: string): Promise<StoredRun | null> {
    return this.runs.get(runId);
  }

  async recentRuns(limit = 20): Promise<StoredRun[]> {
    return this.runs.recent(Math.min(Math.max(limit, 1), 200));
  }

  async steps(runId: string): Promise<StepRecord[]> {
    return this.runs.steps(runId);
  }

  async connectionStates(): Promise<Record<string, ConnectionState>> {
    return this.pool?.pool.states() ?? {};
  }

  /** Told by UserConnections when connections this session holds a token of were removed: the next call asks again. */
  async forgetConnectionTokens(serverKeys: string[]): Promise<void> {
    this.pool?.pool.forgetTokens(serverKeys);
  }

  /** One pool per skill configuration: a catalog change to the servers replaces the warm clients. */
  private poolFor(skill: string, config: SkillConfig, userId: string): DownstreamPool {
    const key = JSON.stringify(config.servers);
    if (this.pool?.key !== key) {
      void this.pool?.pool.close();
      this.pool = { key, pool: new DownstreamPool({ env: this.env, skill, servers: config.servers, userId, tokenHolder: this.ctx.id.toString() }) };
    }
    return this.pool.pool;
  }
}
