import { DurableObject } from "cloudflare:workers";
import { loadSkill } from "../catalog/compiled-skill-cache";
import type { SkillConfig } from "../catalog/catalog-schema";
import { DownstreamPool } from "../downstream/downstream-pool";
import type { ConnectionState } from "../downstream/downstream-types";
import { SlipsnisseError } from "../errors";
import { logAfterReply } from "../observability/log-after-reply";
import type { ExpertCallRequest, ExpertCallResult, ProgressReporter } from "./expert-call";
import type { ExpertRunResult, StepProgress, StepRecord } from "./expert-types";
import { resolveModel } from "./model-registry";
import { runExpert } from "./run-expert";
import { failedRun } from "./session/failed-run";
import { RunLog, type StoredRun } from "./session/run-log";
import { applySessionSchema } from "./session/session-schema";
import { ThreadStore } from "./session/thread-store";

/**
 * One user's session with one skill (named tenant:skill:user, see session-name.ts): warm
 * downstream clients, runs and threads. Runs are recorded here rather than in the Worker
 * because the Worker invocation is cancelled when the client disconnects; the Durable Object
 * carries on and the record is still written.
 */
export class ExpertSession extends DurableObject<Env> {
  private readonly runs: RunLog;
  private readonly threads: ThreadStore;
  private pool: { key: string; pool: DownstreamPool } | null = null;
  private readonly inFlight = new Map<string, AbortController>();

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    applySessionSchema(ctx.storage);
    this.runs = new RunLog(ctx.storage.sql);
    this.threads = new ThreadStore(ctx.storage.sql);
    // A fresh instance has no run in flight, so every "running" row was cut off by a restart.
    this.runs.abandonUnfinished(Date.now());
  }

  async callExpert(request: ExpertCallRequest, onProgress?: ProgressReporter): Promise<ExpertCallResult> {
    const startedAt = Date.now();
    const skill = await loadSkill(this.env, request.skill);
    const expert = skill?.config.experts.find((candidate) => candidate.name === request.expert);
    if (!skill || !expert) {
      const result = failedRun(new UnknownExpertError(request.skill, request.expert), startedAt);
      return { runId: request.runId, outcome: result.outcome, text: result.text, thread: request.thread ?? "", usage: result.usage };
    }

    // Minted before the run row so the record names the thread a new conversation starts.
    const threadId = request.thread ?? this.threads.create(expert.name, startedAt);
    const controller = new AbortController();
    this.inFlight.set(request.runId, controller);
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
    });

    let result: ExpertRunResult;
    try {
      const history = request.thread ? this.threads.history(request.thread) : [];
      const model = await resolveModel(expert, this.env);
      result = await runExpert({
        expert,
        toolPolicy: skill.config.tool_policy,
        args: request.args,
        history,
        model,
        tools: this.poolFor(request.skill, skill.config),
        signal: controller.signal,
        onStep: (progress) => report(onProgress, progress),
      });
    } catch (error) {
      result = failedRun(error, startedAt);
    } finally {
      this.inFlight.delete(request.runId);
    }

    this.runs.finish(request.runId, result, Date.now());
    if (result.outcome !== "error" && result.messages.length > 0) {
      this.threads.append(threadId, result.messages, Date.now());
    }
    const finished = {
      runId: request.runId,
      skill: request.skill,
      expert: expert.name,
      outcome: result.outcome,
      steps: result.usage.steps,
      toolCalls: result.usage.toolCalls,
      elapsedMs: result.usage.elapsedMs,
    };
    logAfterReply(this.ctx, "info", "expert run finished", finished);
    const structured = result.structured ? { structured: result.structured } : {};
    return { runId: request.runId, outcome: result.outcome, text: result.text, ...structured, thread: threadId, usage: result.usage };
  }

  /** Interleaves with a running callExpert (RPC calls to one object are not serialised across awaits). */
  async cancel(runId: string): Promise<boolean> {
    const controller = this.inFlight.get(runId);
    controller?.abort(new DOMException("The client cancelled the expert call.", "AbortError"));
    return controller !== undefined;
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

export class UnknownExpertError extends SlipsnisseError {
  readonly kind = "unknown_expert";
  readonly fix = "List the tools again: the catalog may have changed since the client last did.";
  constructor(readonly skill: string, readonly expert: string) {
    super(`Skill "${skill}" has no expert named "${expert}".`);
  }
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
