import type { ModelMessage } from "ai";
import type { CompiledSkill } from "../../catalog/compiled-skill-cache";
import { workerLoader } from "../../env";
import type { ExpertConfig } from "../../catalog/catalog-schema";
import type { DownstreamPool } from "../../downstream/downstream-pool";
import type { ConnectRequest, ExpertCallRequest, ProgressReporter, UserPrompter } from "../core/call-types";
import type { ExpertRunResult, SandboxLoader, StepProgress } from "../core/run-types";
import { evalPrompter } from "../evals/eval-call";
import type { LiveRun } from "../live/live-run";
import { resolveModel } from "../models/model-registry";
import type { PausedRun } from "../run/paused-run";
import { runExpert } from "../run/run-expert";
import { failedRun } from "../run/run-end";
import type { SessionRunTrace } from "../trace/session-run-trace";
import { type ConnectPrompter, gateRun, pausedForConnection } from "./connection-gate";
import type { PausedRuns } from "./paused-runs";
import { resumeInput } from "./resume-input";

/** What one run of a call needs once its record is started (expert-session.ts). */
export interface GatedRunInput {
  env: Env;
  request: ExpertCallRequest;
  skill: CompiledSkill;
  expert: ExpertConfig;
  startedAt: number;
  thread: { threadId: string | null; history: ModelMessage[]; refused?: Error | undefined };
  paused: PausedRuns;
  /** The session's warm pool for the skill's servers (asked only once the run gets that far). */
  pool: () => DownstreamPool;
  signal: AbortSignal;
  trace: SessionRunTrace;
  live: LiveRun;
  onProgress?: ProgressReporter | undefined;
  askUser?: UserPrompter | undefined;
  onConnect?: ConnectPrompter | undefined;
}

/** How the run went, and the paused run it resumed (put back by the run's end when it failed). */
export interface GatedRunEnd {
  result: ExpertRunResult;
  resumed: PausedRun | undefined;
  connect?: ConnectRequest;
}

/**
 * The run itself: a reply resumes the paused run with the budget it had left (ask-back.ts); a
 * server that signs each user in, not yet connected, pauses the run with the link
 * (connection-gate.ts); otherwise the model's tool loop runs, its model, tools and prompter
 * wrapped by the trace and the live feed. Never throws: any error is the run's failed result.
 */
export async function runGated(input: GatedRunInput): Promise<GatedRunEnd> {
  const { env, request, skill, expert, startedAt, thread, trace, live } = input;
  let resumed: PausedRun | undefined;
  try {
    if (thread.refused) throw thread.refused;
    resumed = input.paused.take(expert.name, request.thread, request, startedAt);
    const pool = input.pool();
    const origin = request.origin ?? publicOrigin(env);
    const gate = await gateRun(
      env,
      pool,
      { skill: request.skill, config: skill.config, expert, user: request.user, origin },
      { awaitConnect: request.awaitConnect, onConnect: input.onConnect, signal: input.signal },
    );
    if (gate !== undefined && "error" in gate) throw gate.error;
    if (gate !== undefined) {
      // The paused run waits for the connection as it waited before this call.
      if (resumed !== undefined && thread.threadId !== null) input.paused.save(thread.threadId, resumed);
      return { result: pausedForConnection(gate.text, startedAt), resumed: undefined, connect: gate.connect };
    }
    const model = live.waits.model(trace.model(await resolveModel(expert, env)));
    const prompter = input.askUser ?? (request.evaluation ? evalPrompter(request.evaluation) : undefined);
    const result = await runExpert({
      ...resumeInput(expert, resumed, request),
      ...(prompter ? { askUser: live.waits.prompter(prompter) } : {}),
      toolPolicy: skill.config.tool_policy,
      args: request.args,
      history: thread.history,
      model,
      tools: live.waits.tools(trace.tools(pool)),
      ...loaderOf(env),
      signal: input.signal,
      onStep: (progress) => {
        report(input.onProgress, progress);
        live.step(progress);
      },
    });
    return { result, resumed };
  } catch (error) {
    return { result: failedRun(error, startedAt), resumed };
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

/** Where connect links point when the request did not say: PUBLIC_URL, else the local default. */
function publicOrigin(env: Env): string {
  return env.PUBLIC_URL.replace(/\/+$/, "") || "http://localhost:8787";
}

/** The sandbox binding, when this deployment has one (a code-mode expert needs it; others never touch it). */
function loaderOf(env: Env): { loader?: SandboxLoader } {
  const loader = workerLoader(env);
  return loader === undefined ? {} : { loader };
}
