import type { ModelMessage } from "ai";
import { DurableObject } from "cloudflare:workers";
import { loadSkill } from "../../catalog/compiled-skill-cache";
import { DEFAULT_RETENTION_DAYS, type SkillConfig } from "../../catalog/catalog-schema";
import { DownstreamPool } from "../../downstream/downstream-pool";
import { redactDeep } from "../../downstream/secret-headers";
import type { ConnectionState } from "../../downstream/downstream-types";
import { log } from "../../observability/logger";
import type { CancelByRequestOutcome, ExpertCallRequest, ExpertCallResult, McpRequestRef, ProgressReporter, UserPrompter } from "../core/call-types";
import type { ExpertRunResult, StepProgress, StepRecord } from "../core/run-types";
import { RunWaits } from "../live/live-waits";
import { resolveModel } from "../models/model-registry";
import { candidateSkill, evalExpert, evalPrompter } from "../evals/eval-call";
import { runExpert } from "../run/run-expert";
import { ThreadOfAnotherExpertError, UnknownExpertError, UnknownThreadError } from "./session-errors";
import { resumeInput } from "./resume-input";
import { checkRunLimits, heldSlots, type LimiterOf, limiterCache, releaseAbandonedReservations, settleRunLimits } from "../limits/run-limits";
import type { PausedRun } from "../run/paused-run";
import { failedRun } from "../run/run-end";
import { PausedRuns } from "./paused-runs";
import { DAY_MS, deleteRunRows, deleteThreadRows, listThreads, oldestKept, type PurgeCount, purgeBefore, type ThreadSummary } from "./session-retention";
import { RunLog, type StoredRun } from "../records/run-log";
import { RunIndexOutbox, runIndexFlushDelay } from "../records/run-index-outbox";
import { earliest, SessionAlarm } from "./session-alarm";
import { applySessionSchema } from "./session-schema";
import { ThreadStore } from "./thread-store";
import { finishRunTrace, interruptedIndexEntry, startRunTrace } from "../trace/session-run-trace";
import { ClientReplies, type ClientReply } from "../protocol/client-replies";
import { FIRST_READER, ResumableStreams, type StreamReplay } from "../protocol/resumable-streams";
import { SessionTasks, type TaskInputReply } from "../protocol/session-tasks";
import { SessionListeners } from "../protocol/session-listeners";
import type { StoredTask, TaskGeneration, TaskOutcome } from "../protocol/task-store";
import { LivePublisher } from "../live/live-publisher";
import { type ConnectPrompter, type ConnectRequest, gateRun, pausedForConnection } from "./connection-gate";
import { IN_FLIGHT_GRACE_MS, RunsInFlight } from "./runs-in-flight";
import { objectEnv } from "../limits/d1-call-path-seam";
import { LimitCounters } from "../limits/limit-counters";
import type { CounterRow } from "../limits/usage-counters";

/**
 * One user's session with one skill (named tenant:skill:user, see session/session-name.ts): warm
 * downstream clients, runs and threads. Runs are recorded here rather than in the Worker
 * because the Worker invocation is cancelled when the client disconnects; the Durable Object
 * carries on and the record is still written.
 */
export class ExpertSession extends DurableObject<Env> {
  private readonly runs: RunLog;
  private readonly threads: ThreadStore;
  private readonly paused: PausedRuns;
  private pool: { key: string; pool: DownstreamPool } | null = null;
  private readonly inFlight = new RunsInFlight();
  private readonly tasks: SessionTasks;
  /** The user's `subscriptions/listen` streams (2026-07-28), as hibernatable WebSockets (session-listeners.ts). */
  private readonly listeners: SessionListeners;
  private readonly clientReplies = new ClientReplies();
  private readonly streams: ResumableStreams;
  /** Index rows of ended runs, written to D1 in batches by the alarm. */
  private readonly indexOutbox: RunIndexOutbox;
  /** When the last purge found the next row expiring; unknown (purge at the next alarm) until one ran here. */
  private retentionDueAt: number | undefined;
  private readonly live: LivePublisher;
  /** The one alarm's due time, in memory after its first read (session-alarm.ts). */
  private readonly alarmTime: SessionAlarm;
  /** The user's usage counters of this skill (limits.per_user), copied to D1 by the alarm. */
  private readonly counters: LimitCounters;
  /** The skill's SkillLimiter (limits.per_skill), through one stub so calls keep their order. */
  private readonly limiter: LimiterOf;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, objectEnv(env));
    env = this.env;
    applySessionSchema(ctx.storage);
    this.alarmTime = new SessionAlarm(ctx.storage);
    this.counters = new LimitCounters(ctx.storage.sql);
    this.limiter = limiterCache(env, ctx.id.toString());
    this.runs = new RunLog(ctx.storage.sql);
    this.threads = new ThreadStore(ctx.storage.sql);
    this.paused = new PausedRuns(ctx.storage.sql);
    this.streams = new ResumableStreams(ctx.storage.sql, (runId) => this.runs.get(runId));
    this.tasks = new SessionTasks({
      sql: ctx.storage.sql,
      run: (request, onProgress) => this.callExpert(request, onProgress),
      cancelRun: (runId) => this.cancel(runId),
      wakeAt: (due) => this.alarmTime.noLaterThan(due),
      changed: (taskId) => this.listeners.taskChanged(taskId),
    });
    this.listeners = new SessionListeners(ctx, (taskId, generation) => this.tasks.get(taskId)?.generation === generation);
    this.live = new LivePublisher(env, ctx);
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
      return this.tasks.interrupted(now);
    });
    for (const taskId of cutTasks) this.listeners.taskChanged(taskId);
    void this.armAlarm(now);
    // Before any call is let in, so a cut-off run's slot is free for the next one.
    void ctx.blockConcurrencyWhile(() =>
      releaseAbandonedReservations(env, this.counters, ctx.storage).catch((error: unknown) =>
        log("error", "abandoned run slots not freed", { error: String(error) }),
      ),
    );
  }

  /**
   * `askUser`, when the MCP surface can reach the client's user mid-call (elicitation), is
   * called for approvals and ask_user questions; without it such a run pauses instead.
   */
  async callExpert(request: ExpertCallRequest, onProgress?: ProgressReporter, askUser?: UserPrompter, onConnect?: ConnectPrompter): Promise<ExpertCallResult> {
    const stream = request.stream;
    if (!stream) return this.runCall(request, onProgress, askUser, onConnect);
    // Kept here for a client that resumes the stream after its connection dropped (the run goes on).
    this.streams.open(stream, request.runId);
    const result = await this.runCall(
      request,
      (progress) => {
        this.streams.progress(stream.id, progress);
        return onProgress?.(progress);
      },
      askUser,
      onConnect,
    );
    this.streams.finish(stream.id, result);
    return result;
  }

  /**
   * The events of a resumable call's stream after event `after` (waiting up to `waitMs` for one)
   * for the connection `reader` names (resumable-streams.ts); null when unknown here.
   */
  async resumeStream(streamId: string, after: number, waitMs: number, reader: string): Promise<StreamReplay | null> {
    return this.streams.after(streamId, after, Math.min(Math.max(waitMs, 0), 30_000), reader);
  }

  /**
   * A resumable call's stream dropped (the first response, or the resumed one `reader` names).
   * The 2025 transport says a disconnect is no cancel, so the run goes on for a client that
   * reconnects with Last-Event-ID within `graceMs`; a client that does not has left, and the run
   * is cancelled as a disconnect always cancelled it. A connection still reading the stream keeps it.
   */
  async streamDropped(streamId: string, graceMs: number, reader = FIRST_READER): Promise<void> {
    this.streams.giveUpUnlessResumed(streamId, reader, Math.min(Math.max(graceMs, 0), 60_000), (runId) => void this.cancel(runId));
  }

  private async runCall(
    request: ExpertCallRequest,
    onProgress?: ProgressReporter,
    askUser?: UserPrompter,
    onConnect?: ConnectPrompter,
  ): Promise<ExpertCallResult> {
    const startedAt = Date.now();
    const skill = candidateSkill(request.skill, request.evaluation) ?? (await loadSkill(this.env, request.skill));
    const found = skill?.config.experts.find((candidate) => candidate.name === request.expert);
    if (!skill || !found) {
      const result = failedRun(new UnknownExpertError(request.skill, request.expert), startedAt);
      return { runId: request.runId, outcome: result.outcome, text: result.text, usage: result.usage };
    }
    // An eval run is this same path with the model swapped; it is bounded by the eval's own cost
    // budget instead of the skill's limits, which are the members' (src/admin/evals).
    const expert = evalExpert(found, request.evaluation);
    const limits = request.evaluation
      ? { reservation: null }
      : await checkRunLimits(this.limiter, this.counters, this.ctx.storage, request, skill.config, startedAt);
    if ("refused" in limits) return limits.refused;

    // A handle this session never minted (another user's, or a guess) is refused before the run
    // row, so it is neither stored in this user's records nor handed back as theirs.
    let history: ModelMessage[] = [];
    let refusedThread: unknown;
    if (request.thread !== undefined) {
      try {
        history = this.threads.history(request.thread, expert.name);
      } catch (error) {
        if (!(error instanceof UnknownThreadError || error instanceof ThreadOfAnotherExpertError)) throw error;
        refusedThread = error;
      }
    }
    // Minted before the run row so the record names the thread a new conversation starts.
    const threadId = refusedThread ? null : (request.thread ?? this.threads.create(expert.name, startedAt));
    const signal = this.inFlight.begin(request.runId, { startedAt, timeoutMs: expert.budget.timeout_ms, mcpRequest: request.mcpRequest });
    const trace = startRunTrace(this.env, request, skill.config, expert);
    this.runs.start({
      id: request.runId,
      skill: request.skill,
      expert: expert.name,
      userId: request.user.userId,
      threadId,
      catalogVersion: skill.version,
      provider: expert.provider,
      model: expert.model ?? null,
      startedAt,
      ...trace.start,
    });
    this.listeners.runsChanged();
    // Only an alarm wakes an object nobody calls: without one due soon, a restart now would leave
    // this run unindexed until the user's next call (the constructor closes cut-off runs).
    const inFlightAlarm = startedAt + expert.budget.timeout_ms + IN_FLIGHT_GRACE_MS;
    // A per-user reservation reaches D1 a second later, not at the run's end: D1's copy is how the
    // admin's limits view finds the users to ask (live-usage.ts).
    const countersCopy = limits.reservation?.perUser ? startedAt + runIndexFlushDelay(this.env) : inFlightAlarm;
    await this.alarmTime.noLaterThan(Math.min(inFlightAlarm, countersCopy));
    const liveRun = { runId: request.runId, skill: request.skill, expert: expert.name, user: request.user };
    this.live.started({ ...liveRun, startedAt, maxSteps: expert.budget.max_steps });
    const waits = new RunWaits((waiting) => this.live.waiting(request.runId, waiting));

    let result: ExpertRunResult;
    let resumed: PausedRun | undefined;
    let connect: ConnectRequest | undefined;
    try {
      if (refusedThread) throw refusedThread;
      // A reply resumes the paused run with the budget it had left (ask-back.ts).
      resumed = this.paused.take(expert.name, request.thread, request, startedAt);
      const pool = this.poolFor(request.skill, skill.config, request.user.userId);
      // A server that signs each user in, not yet connected: the run pauses with the link (connection-gate.ts).
      const origin = request.origin ?? publicOrigin(this.env);
      const gate = await gateRun(
        this.env,
        pool,
        { skill: request.skill, config: skill.config, expert, user: request.user, origin },
        { awaitConnect: request.awaitConnect, onConnect, signal },
      );
      if (gate !== undefined && "error" in gate) throw gate.error;
      if (gate !== undefined) {
        connect = gate.connect;
        if (resumed !== undefined && threadId !== null) this.paused.save(threadId, resumed);
        resumed = undefined;
        result = pausedForConnection(gate.text, startedAt);
      } else {
        const model = waits.model(trace.model(await resolveModel(expert, this.env)));
        result = await runExpert({
          ...resumeInput(expert, resumed, request),
          ...(askUser ? { askUser: waits.prompter(askUser) } : request.evaluation ? { askUser: waits.prompter(evalPrompter(request.evaluation)) } : {}),
          toolPolicy: skill.config.tool_policy,
          args: request.args,
          history,
          model,
          tools: waits.tools(trace.tools(pool)),
          signal,
          onStep: (progress) => {
            report(onProgress, progress);
            this.live.step(request.runId, progress);
          },
        });
      }
    } catch (error) {
      result = failedRun(error, startedAt);
    } finally {
      this.inFlight.end(request.runId);
    }
    const settled = settleRunLimits(this.limiter, this.counters, this.ctx.storage, request, limits.reservation, skill.config, expert, result.usage);
    if (settled) this.ctx.waitUntil(settled);

    const endedAt = Date.now();
    const stored = finishRunTrace(trace, result);
    this.runs.finish(request.runId, { ...result, steps: stored.steps, error: stored.error }, endedAt, stored.end);
    this.live.ended(liveRun, result, stored.steps, endedAt);
    // Not a D1 write on the call's path: the alarm flushes the outbox in batches.
    this.indexOutbox.add([trace.indexEntry({ request, skill, expert, threadId, startedAt, endedAt, result, steps: stored.steps })], endedAt);
    await this.armAfterRun(inFlightAlarm, endedAt);
    const question = threadId === null ? undefined : this.paused.afterRun(threadId, request.runId, expert, result, resumed, endedAt);
    if (threadId !== null && result.outcome !== "error" && result.outcome !== "paused" && result.messages.length > 0) {
      // Thread turns are stored too: no secret the caller or the model echoed may stay in them.
      const bounds = { maxTokens: expert.history.max_tokens, maxMessages: expert.history.max_messages };
      this.threads.append(threadId, redactDeep(result.messages, trace.redact), endedAt, bounds);
    }
    // A thread this run started is stored with its first turns, or here without any (an error, a pause): its handle must work.
    if (threadId !== null) this.threads.keep(threadId, endedAt);
    const structured = result.structured ? { structured: result.structured } : {};
    // An error text can quote a provider's or server's message, which may echo a credential.
    const text = result.error ? trace.redact(result.text) : result.text;
    const thread = threadId === null ? {} : { thread: threadId };
    return {
      runId: request.runId,
      outcome: result.outcome,
      text,
      ...structured,
      ...thread,
      ...(question ? { question } : {}),
      ...(connect ? { connect } : {}),
      ...(stored.end.unavailable.length > 0 ? { unavailable: [...stored.end.unavailable] } : {}),
      ...(request.evaluation ? { recordedSteps: stored.steps } : {}),
      usage: result.usage,
      traceId: trace.traceId,
    };
  }

  /** Only the MCP surface's listen sockets come in by fetch (listen-stream.ts). */
  override async fetch(request: Request): Promise<Response> {
    return this.listeners.accept(request);
  }

  override async webSocketMessage(ws: WebSocket, message: string | ArrayBuffer): Promise<void> {
    this.listeners.message(ws, message);
  }

  override async webSocketClose(ws: WebSocket, code: number, reason: string): Promise<void> {
    this.listeners.closed(ws, code, reason);
  }

  /** The skill's limiter asks which of these runs still hold its slots: the others were cut off (slot-holders.ts). */
  async heldSlots(runIds: string[]): Promise<string[]> {
    return heldSlots(this.limiter, runIds);
  }

  /** The user's counters of the day as they are now, for the admin's limits view (live-usage.ts). */
  async limitRow(subject: string, day: string): Promise<CounterRow> {
    return this.counters.row(subject, day);
  }

  /** Interleaves with a running callExpert (RPC calls to one object are not serialised across awaits). */
  async cancel(runId: string): Promise<boolean> {
    return this.inFlight.cancel(runId);
  }

  /** A client's `notifications/cancelled`, by the request it names (runs-in-flight.ts). */
  async cancelRequest(ref: McpRequestRef): Promise<CancelByRequestOutcome> {
    return this.inFlight.cancelRequest(ref);
  }

  /**
   * Waits for the client's reply to a request the MCP surface sent it on a stateless 2025 call's
   * stream (client-replies.ts); the reply arrives by `deliverClientReply` from another request.
   */
  async awaitClientReply(requestId: string, timeoutMs: number): Promise<ClientReply> {
    return this.clientReplies.wait(requestId, Math.min(Math.max(timeoutMs, 1), 3_600_000));
  }

  /** A client's reply to a request it was sent mid-call; false when no run here waits for it. */
  async deliverClientReply(requestId: string, reply: ClientReply): Promise<boolean> {
    return this.clientReplies.deliver(requestId, reply);
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
    const skillName = sessionSkill(this.ctx.id.name) ?? this.ctx.storage.sql.exec<{ skill: string }>(`SELECT skill FROM runs LIMIT 1`).toArray()[0]?.skill;
    const skill = skillName === undefined ? null : await loadSkill(this.env, skillName);
    const retentionMs = (skill?.config.retention_days ?? DEFAULT_RETENTION_DAYS) * DAY_MS;
    const purged = this.ctx.storage.transactionSync(() => purgeBefore(this.ctx.storage.sql, now - retentionMs));
    this.indexOutbox.expire(now - retentionMs);
    const oldest = oldestKept(this.ctx.storage.sql);
    const retentionDue = oldest === null ? null : Math.max(Math.min(oldest + retentionMs, now + DAY_MS), now + 60_000);
    this.retentionDueAt = retentionDue ?? undefined;
    await this.alarmTime.set(this.nextAlarm(retentionDue, now));
    if (purged.runs + purged.threads > 0) log("info", "session retention", { ...purged });
    return purged;
  }

  /**
   * Flushes the run index outbox, then purges (which sets the next alarm). While runs keep
   * ending, the alarm fires about once a second for the flush: the purge (which scans the runs
   * and turns) waits for its own time when this instance knows it.
   */
  override async alarm(): Promise<void> {
    this.alarmTime.fired();
    await this.counters.flush(this.env.DB);
    await this.indexOutbox.flush(this.env.DB);
    // Waiting for running tasks keeps the object alive; runs that end meanwhile (the tasks' own
    // among them) queue index rows, written right after.
    if ((await this.tasks.onAlarm()) > 0) await this.indexOutbox.flush(this.env.DB);
    const now = Date.now();
    if (this.retentionDueAt !== undefined && this.retentionDueAt > now) {
      await this.alarmTime.set(this.nextAlarm(this.retentionDueAt, now));
      return;
    }
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
    return this.tasks.start(taskId, request, structuredExpected, ttlMs, generation);
  }

  /** The user's reply to what a 2026-07-28 task waits for (tasks/update); false when it waits for no input keyed so. */
  async answerTask(taskId: string, key: string, reply: TaskInputReply): Promise<boolean> {
    return this.tasks.answer(taskId, key, reply);
  }

  async task(taskId: string): Promise<StoredTask | null> {
    return this.tasks.get(taskId);
  }

  async taskList(limit: number, after?: string): Promise<StoredTask[]> {
    return this.tasks.list(Math.min(Math.max(limit, 1), 200), after);
  }

  async taskOutcome(taskId: string, waitMs: number): Promise<TaskOutcome | null> {
    return this.tasks.outcome(taskId, Math.min(Math.max(waitMs, 0), 60_000));
  }

  async cancelTask(taskId: string): Promise<StoredTask | null> {
    return this.tasks.cancel(taskId);
  }

  /**
   * A session that holds rows always has an alarm: the retention check a day on (which finds
   * the next expiry), or sooner when index rows wait.
   */
  private async armAlarm(now: number): Promise<void> {
    await this.alarmTime.noLaterThan(Math.min(now + DAY_MS, this.indexOutbox.dueAt() ?? Number.POSITIVE_INFINITY));
  }

  /** The earliest of the alarm's jobs (session-alarm.ts): retention, tasks, the index outbox, runs in flight. */
  private nextAlarm(retentionDue: number | null, now: number): number | null {
    return earliest(retentionDue, this.tasks.nextDue(now), this.indexOutbox.dueAt(), this.inFlight.nextCheck(now), this.countersDue(now));
  }

  /**
   * After a run ends its index row waits for the flush; the alarm its start armed (`inFlightAlarm`)
   * is not needed any more and gives way to what is due (the flush, other runs, tasks, retention).
   * No extra storage op: the alarm is read from memory and set at most once, as the flush needs.
   * Every job brings the alarm forward to its own due time when it is queued (noLaterThan),
   * so an alarm due no later than this run's index row, and not the one this run's start set,
   * already covers what is due: then nothing is read (while calls keep coming, the usual case:
   * the flush a second after the last run is always pending).
   */
  private async armAfterRun(inFlightAlarm: number, now: number): Promise<void> {
    const current = await this.alarmTime.current();
    if (current !== null && current !== inFlightAlarm && current <= now + runIndexFlushDelay(this.env)) return;
    const next = this.nextAlarm(this.retentionDueAt ?? now + DAY_MS, now);
    if (next !== null && (current === null || current === inFlightAlarm || next < current)) await this.alarmTime.set(next);
  }

  /** Counters not yet in D1 (a failed copy) are due again with the next index flush. */
  private countersDue(now: number): number | null {
    return this.counters.dirty() ? now + runIndexFlushDelay(this.env) : null;
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

/** The skill in a session's name (tenant:skill:user, URI-encoded parts), when the id carries its name. */
function sessionSkill(name: string | undefined): string | undefined {
  const part = name?.split(":")[1];
  return part === undefined ? undefined : decodeURIComponent(part);
}

/** Progress is best effort: once the caller's request is gone the callback stub throws. */
function report(onProgress: ProgressReporter | undefined, progress: StepProgress): void {
  if (!onProgress) return;
  try {
    void Promise.resolve(onProgress(progress)).catch(() => undefined);
  } catch {
    // The caller disconnected; the run goes on and is still recorded.
  }
}

/** Where connect links point when the request did not say: PUBLIC_URL, else the local default. */
function publicOrigin(env: Env): string {
  return env.PUBLIC_URL.replace(/\/+$/, "") || "http://localhost:8787";
}
