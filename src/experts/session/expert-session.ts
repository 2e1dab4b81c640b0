import type { ModelMessage } from "ai";
import { DurableObject } from "cloudflare:workers";
import { loadSkill } from "../../catalog/compiled-skill-cache";
import { DEFAULT_RETENTION_DAYS, type SkillConfig } from "../../catalog/catalog-schema";
import { DownstreamPool } from "../../downstream/downstream-pool";
import { redactDeep } from "../../downstream/secret-headers";
import type { ConnectionState } from "../../downstream/downstream-types";
import { logAfterReply } from "../../observability/log-after-reply";
import { log } from "../../observability/logger";
import type { CancelByRequestOutcome, ExpertCallRequest, ExpertCallResult, McpRequestRef, ProgressReporter, UserPrompter } from "./expert-call";
import type { ExpertRunResult, StepProgress, StepRecord } from "../run/expert-types";
import { resolveModel } from "../models/model-registry";
import { candidateSkill, evalExpert, evalPrompter } from "../evals/eval-call";
import { runExpert } from "../run/run-expert";
import { ThreadOfAnotherExpertError, UnknownExpertError, UnknownThreadError } from "./session-errors";
import { resumeInput } from "./resume-input";
import { checkRunLimits, releaseAbandonedReservations, settleRunLimits } from "../limits/run-limits";
import type { PausedRun } from "../run/paused-run";
import { failedRun } from "../run/run-end";
import { PausedRuns } from "./paused-runs";
import { DAY_MS, deleteRunRows, deleteThreadRows, listThreads, oldestKept, type PurgeCount, purgeBefore, type ThreadSummary } from "./session-retention";
import { RunLog, type StoredRun } from "./run-log";
import { RunIndexOutbox, runIndexFlushDelay } from "./run-index-outbox";
import { alarmNoLaterThan, earliest, setOrClearAlarm } from "./session-alarm";
import { applySessionSchema } from "./session-schema";
import { ThreadStore } from "./thread-store";
import { finishRunTrace, interruptedIndexEntry, startRunTrace } from "../trace/session-run-trace";
import { SessionTasks } from "./session-tasks";
import type { StoredTask, TaskOutcome } from "./task-store";
import { LivePublisher } from "../live/live-publisher";

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
  private readonly inFlight = new Map<string, AbortController>();
  /** Runs in flight by the MCP request that started them (see requestKey), for cancelRequest. */
  private readonly byRequest = new Map<string, Set<string>>();
  private readonly tasks: SessionTasks;
  /** Index rows of ended runs, written to D1 in batches by the alarm. */
  private readonly indexOutbox: RunIndexOutbox;
  /** When the last purge found the next row expiring; unknown (purge at the next alarm) until one ran here. */
  private retentionDueAt: number | undefined;
  private readonly live: LivePublisher;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    applySessionSchema(ctx.storage);
    this.runs = new RunLog(ctx.storage.sql);
    this.threads = new ThreadStore(ctx.storage.sql);
    this.paused = new PausedRuns(ctx.storage.sql);
    this.tasks = new SessionTasks({
      sql: ctx.storage.sql,
      run: (request, onProgress) => this.callExpert(request, onProgress),
      cancelRun: (runId) => this.cancel(runId),
      wakeAt: (due) => alarmNoLaterThan(ctx.storage, due),
    });
    this.live = new LivePublisher(env, ctx);
    this.indexOutbox = new RunIndexOutbox(ctx.storage.sql, () => runIndexFlushDelay(env));
    // A fresh instance has no run in flight, so every "running" row was cut off by a restart;
    // each is closed and indexed as interrupted.
    const now = Date.now();
    ctx.storage.transactionSync(() => {
      this.indexOutbox.add(
        this.runs.unfinished().map((run) => interruptedIndexEntry(run, now)),
        now,
      );
      this.runs.abandonUnfinished(now);
    });
    void this.armAlarm(now);
    // Before any call is let in, so a cut-off run's slot is free for the next one.
    void ctx.blockConcurrencyWhile(() =>
      releaseAbandonedReservations(env.DB, ctx.storage).catch((error: unknown) => log("error", "abandoned run slots not freed", { error: String(error) })),
    );
  }

  /**
   * `askUser`, when the MCP surface can reach the client's user mid-call (elicitation), is
   * called for approvals and ask_user questions; without it such a run pauses instead.
   */
  async callExpert(request: ExpertCallRequest, onProgress?: ProgressReporter, askUser?: UserPrompter): Promise<ExpertCallResult> {
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
    const limits = request.evaluation ? { reservation: null } : await checkRunLimits(this.env.DB, this.ctx.storage, request, skill.config, startedAt);
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
    const controller = new AbortController();
    this.inFlight.set(request.runId, controller);
    const key = request.mcpRequest ? requestKey(request.mcpRequest) : undefined;
    if (key !== undefined) this.byRequest.set(key, (this.byRequest.get(key) ?? new Set()).add(request.runId));
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
    const liveRun = { runId: request.runId, skill: request.skill, expert: expert.name, user: request.user };
    this.live.started({ ...liveRun, startedAt, maxSteps: expert.budget.max_steps });

    let result: ExpertRunResult;
    let resumed: PausedRun | undefined;
    try {
      if (refusedThread) throw refusedThread;
      // A reply resumes the paused run with the budget it had left (ask-back.ts).
      resumed = this.paused.take(expert.name, request.thread, request, startedAt);
      const model = trace.model(await resolveModel(expert, this.env));
      result = await runExpert({
        ...resumeInput(expert, resumed, request),
        ...(askUser ? { askUser } : request.evaluation ? { askUser: evalPrompter(request.evaluation) } : {}),
        toolPolicy: skill.config.tool_policy,
        args: request.args,
        history,
        model,
        tools: trace.tools(this.poolFor(request.skill, skill.config)),
        signal: controller.signal,
        onStep: (progress) => {
          report(onProgress, progress);
          this.live.step(request.runId, progress);
        },
      });
    } catch (error) {
      result = failedRun(error, startedAt);
    } finally {
      this.inFlight.delete(request.runId);
      if (key !== undefined) forget(this.byRequest, key, request.runId);
    }
    await settleRunLimits(this.env.DB, this.ctx.storage, request.runId, limits.reservation, skill.config, expert, result.usage);

    const endedAt = Date.now();
    const stored = finishRunTrace(trace, result);
    this.runs.finish(request.runId, { ...result, steps: stored.steps, error: stored.error }, endedAt, stored.end);
    this.live.ended(liveRun, result, stored.steps, endedAt);
    // Not a D1 write on the call's path: the alarm flushes the outbox in batches.
    this.indexOutbox.add([trace.indexEntry({ request, skill, expert, threadId, startedAt, endedAt, result, steps: stored.steps })], endedAt);
    await this.armIndexFlush();
    const question = threadId === null ? undefined : this.paused.afterRun(threadId, request.runId, expert, result, resumed, endedAt);
    if (threadId !== null && result.outcome !== "error" && result.outcome !== "paused" && result.messages.length > 0) {
      // Thread turns are stored too: no secret the caller or the model echoed may stay in them.
      const bounds = { maxTokens: expert.history.max_tokens, maxMessages: expert.history.max_messages };
      this.threads.append(threadId, redactDeep(result.messages, trace.redact), endedAt, bounds);
    }
    const finished = {
      runId: request.runId,
      skill: request.skill,
      expert: expert.name,
      outcome: result.outcome,
      steps: result.usage.steps,
      toolCalls: result.usage.toolCalls,
      retries: result.usage.retries,
      elapsedMs: result.usage.elapsedMs,
    };
    logAfterReply(this.ctx, "info", "expert run finished", finished);
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
      usage: result.usage,
      traceId: trace.traceId,
    };
  }

  /** Interleaves with a running callExpert (RPC calls to one object are not serialised across awaits). */
  async cancel(runId: string): Promise<boolean> {
    const controller = this.inFlight.get(runId);
    controller?.abort(new DOMException("The client cancelled the expert call.", "AbortError"));
    return controller !== undefined;
  }

  /**
   * A client's `notifications/cancelled` names its JSON-RPC request, not our run. This object
   * belongs to the caller (tenant, skill and user), so a cancel can only ever reach the
   * caller's own runs. Within them, a request id is unique per connection only: two
   * connections of the same user without a session id to tell them apart (stateless 2025
   * Streamable HTTP issues none) may both have request 5 in flight. Then the cancel is
   * ambiguous and aborts nothing, because stopping the wrong one of the user's runs is worse
   * than letting the right one finish; it is logged. A cancel that overtakes its own call
   * (before the run started here) finds nothing, which the spec allows: a receiver may ignore a
   * cancel for a request it does not know.
   */
  async cancelRequest(ref: McpRequestRef): Promise<CancelByRequestOutcome> {
    const runIds = [...(this.byRequest.get(requestKey(ref)) ?? [])];
    if (runIds.length > 1) {
      log("warn", "ambiguous cancel: several runs share the request id", { requestId: ref.requestId, runs: runIds.length });
      return "ambiguous";
    }
    const [runId] = runIds;
    if (runId === undefined) return "not_found";
    return (await this.cancel(runId)) ? "cancelled" : "not_found";
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
    await setOrClearAlarm(this.ctx.storage, earliest(retentionDue, this.tasks.nextDue(now), this.indexOutbox.dueAt()));
    if (purged.runs + purged.threads > 0) log("info", "session retention", { ...purged });
    return purged;
  }

  /**
   * Flushes the run index outbox, then purges (which sets the next alarm). While runs keep
   * ending, the alarm fires about once a second for the flush: the purge (which scans the runs
   * and turns) waits for its own time when this instance knows it.
   */
  override async alarm(): Promise<void> {
    await this.indexOutbox.flush(this.env.DB);
    // Waiting for running tasks keeps the object alive; runs that end meanwhile (the tasks' own
    // among them) queue index rows, written right after.
    if ((await this.tasks.onAlarm()) > 0) await this.indexOutbox.flush(this.env.DB);
    const now = Date.now();
    if (this.retentionDueAt !== undefined && this.retentionDueAt > now) {
      await setOrClearAlarm(this.ctx.storage, earliest(this.retentionDueAt, this.tasks.nextDue(now), this.indexOutbox.dueAt()));
      return;
    }
    await this.purgeExpired(now);
  }

  /** Starts `request` as an MCP task and returns at once; the run goes on in this object (session-tasks.ts). */
  async startTask(taskId: string, request: ExpertCallRequest, structuredExpected: boolean, ttlMs: number): Promise<StoredTask> {
    return this.tasks.start(taskId, request, structuredExpected, ttlMs);
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
    await alarmNoLaterThan(this.ctx.storage, Math.min(now + DAY_MS, this.indexOutbox.dueAt() ?? Number.POSITIVE_INFINITY));
  }

  private async armIndexFlush(): Promise<void> {
    const due = this.indexOutbox.dueAt();
    if (due !== null) await alarmNoLaterThan(this.ctx.storage, due);
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

  /** One pool per skill configuration: a catalog change to the servers replaces the warm clients. */
  private poolFor(skill: string, config: SkillConfig): DownstreamPool {
    const key = JSON.stringify(config.servers);
    if (this.pool?.key !== key) {
      void this.pool?.pool.close();
      this.pool = { key, pool: new DownstreamPool({ env: this.env, skill, servers: config.servers }) };
    }
    return this.pool.pool;
  }
}

/** The skill in a session's name (tenant:skill:user, URI-encoded parts), when the id carries its name. */
function sessionSkill(name: string | undefined): string | undefined {
  const part = name?.split(":")[1];
  return part === undefined ? undefined : decodeURIComponent(part);
}

/** Request ids 1 and "1" are different JSON-RPC ids, so the key keeps the type. */
function requestKey(ref: McpRequestRef): string {
  return JSON.stringify([ref.connection ?? null, ref.requestId]);
}

function forget(index: Map<string, Set<string>>, key: string, runId: string): void {
  const runs = index.get(key);
  runs?.delete(runId);
  if (runs?.size === 0) index.delete(key);
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
