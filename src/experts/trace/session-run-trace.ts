import type { LanguageModel } from "ai";
import type { CompiledSkill } from "../../catalog/compiled-skill-cache";
import type { ExpertConfig, SkillConfig } from "../../catalog/catalog-schema";
import { modelCost } from "../../catalog/model-pricing";
import type { ToolSource } from "../../downstream/downstream-types";
import { type CallerTrace, newSpanId, parseCallerTrace, type RunTrace, traceIdOf, traceparent, withRunTrace } from "../../downstream/trace-context";
import type { ExpertCallRequest } from "../core/call-types";
import type { ExpertRunResult, ModelCallRecord, StepRecord } from "../core/run-types";
import { modelEndpointHost } from "../models/describe-model-error";
import { DEFAULT_MODEL_IDS, modelIdOf } from "../models/model-defaults";
import type { RunEndTrace, StoredRun, StoredRunStart } from "../records/run-log";
import type { QueuedRun } from "../records/run-index-outbox";
import { indexedToolCalls, refusedCallCount, toolErrorCount } from "../records/run-index-writer";
import { traceModelCalls, type TracedModel } from "./model-call-trace";
import { tracedSteps } from "./run-trace";
import { excerpt, jsonExcerpt, type Redact, TRACE_BOUNDS } from "../core/trace-excerpt";
import { traceRedactor } from "./trace-redactor";

export interface RunIndexContext {
  request: ExpertCallRequest;
  skill: CompiledSkill;
  expert: ExpertConfig;
  threadId: string | null;
  startedAt: number;
  endedAt: number;
  result: ExpertRunResult;
  steps: readonly StepRecord[];
}

/**
 * One run's trace inside the session: its trace id (sent as `traceparent` on every downstream and
 * model request the run makes), the redactor every stored text passes through, and the traced
 * model that counts retries.
 */
export interface SessionRunTrace {
  traceId: string;
  /** The run's trace context: the caller's trace id when it sent one, and the run's own span as every outbound request's parent. */
  context: RunTrace & { spanId: string };
  /** The caller's span, the parent of the run's (absent: the run's span is a trace's root). */
  parentSpanId?: string;
  /** The span id a tool call's downstream request named as its parent, by the model's tool call id. */
  toolSpanId(toolCallId: string): string | undefined;
  redact: Redact;
  start: Pick<StoredRunStart, "traceId" | "caller" | "args">;
  /** The run's row as it starts, with the trace's part (`start`). */
  runStart(run: { skill: CompiledSkill; threadId: string | null; startedAt: number }): StoredRunStart;
  /** The model with the run's traceparent header and retry count. */
  model(model: LanguageModel): LanguageModel;
  /** The run's tools: each downstream request runs with the trace as the async context its fetch reads. */
  tools(source: ToolSource): ToolSource;
  retriesPerCall(): number[];
  /** The model call a run ended waiting on, as a step's model record: provider, model, endpoint host, the wait. */
  pendingModel(startedAt: number, endedAt: number): ModelCallRecord;
  /** The run's index row and tool-call rows, for the session's outbox (run-index-outbox.ts). */
  indexEntry(context: RunIndexContext): QueuedRun;
}

export function startRunTrace(env: Env, request: ExpertCallRequest, skill: SkillConfig, expert: ExpertConfig): SessionRunTrace {
  const caller = callerTraceOf(request.callerTrace);
  const traceId = caller?.traceId ?? traceIdOf(request.runId);
  const context: RunTrace & { spanId: string } = {
    traceId,
    spanId: newSpanId(),
    ...(caller === undefined ? {} : { sampled: caller.sampled }),
    ...(caller?.traceState === undefined ? {} : { traceState: caller.traceState }),
  };
  const redact = traceRedactor(env, skill, expert);
  const { userId, login, email } = request.user;
  let traced: TracedModel | undefined;
  const start = {
    traceId,
    caller: { userId, login, ...(email ? { email } : {}) },
    args: jsonExcerpt(request.args, redact, TRACE_BOUNDS.arguments),
  };
  const toolSpans = new Map<string, string>();
  return {
    traceId,
    context,
    toolSpanId: (toolCallId) => toolSpans.get(toolCallId),
    ...(caller === undefined ? {} : { parentSpanId: caller.spanId }),
    redact,
    start,
    runStart(run) {
      return {
        id: request.runId,
        skill: request.skill,
        expert: expert.name,
        userId,
        threadId: run.threadId,
        catalogVersion: run.skill.version,
        provider: expert.provider,
        model: expert.model ?? null,
        startedAt: run.startedAt,
        ...start,
      };
    },
    model(model) {
      traced = traceModelCalls(model, context);
      return traced.model;
    },
    tools: (source) => ({
      listTools: (serverId, options) => withRunTrace(context, () => source.listTools(serverId, options)),
      // Each call is its own span (execute_tool), the parent a downstream server's spans hang under.
      callTool: (serverId, toolName, args, options) => {
        const spanId = newSpanId();
        if (options?.toolCallId !== undefined) toolSpans.set(options.toolCallId, spanId);
        return withRunTrace({ ...context, spanId }, () => source.callTool(serverId, toolName, args, options));
      },
      ...(source.withheldTools ? { withheldTools: (serverId: string) => source.withheldTools?.(serverId) ?? [] } : {}),
      ...(source.skill === undefined ? {} : { skill: source.skill }),
    }),
    retriesPerCall: () => traced?.retriesPerCall() ?? [],
    pendingModel: (startedAt, endedAt) => ({
      provider: expert.provider,
      model: modelIdOf(expert),
      latencyMs: Math.max(0, endedAt - startedAt),
      retries: traced?.failedSinceLastAnswer() ?? 0,
      startedAt,
      pending: true,
      endpoint: modelEndpointHost(expert),
    }),
    indexEntry(context) {
      const { result, expert } = context;
      const model = modelIdOf(expert);
      return {
        row: {
          runId: context.request.runId,
          skill: context.request.skill,
          expert: expert.name,
          userId,
          userLogin: login,
          userEmail: email ?? null,
          threadId: context.threadId,
          catalogVersion: context.skill.version,
          provider: expert.provider,
          model,
          outcome: result.outcome,
          traceId,
          startedAt: context.startedAt,
          endedAt: context.endedAt,
          elapsedMs: result.usage.elapsedMs,
          steps: result.usage.steps,
          inputTokens: result.usage.inputTokens,
          outputTokens: result.usage.outputTokens,
          toolCalls: result.usage.toolCalls,
          toolErrors: toolErrorCount(context.steps),
          downstreamBytes: result.usage.downstreamBytesRead,
          cost: modelCost(context.skill.config.pricing, expert.provider, model, result.usage.inputTokens, result.usage.outputTokens),
          budgetExhausted: result.usage.budgetExhausted,
          refusedCalls: refusedCallCount(context.steps),
        },
        calls: indexedToolCalls(context.steps),
        retries: result.usage.retries,
      };
    },
  };
}

/** A caller trace as it crossed RPC, checked again as W3C Trace Context: the session trusts no field it did not check. */
function callerTraceOf(trace: CallerTrace | undefined): CallerTrace | undefined {
  if (trace === undefined) return undefined;
  const context = { traceId: trace.traceId, spanId: trace.spanId, sampled: trace.sampled };
  return parseCallerTrace(traceparent(context), trace.traceState);
}

/** What the run record stores of a finished run: redacted, bounded steps, notes and answer. */
export function finishRunTrace(trace: SessionRunTrace, result: ExpertRunResult): Pick<ExpertRunResult, "steps" | "error"> & { end: RunEndTrace } {
  return {
    ...(result.error ? { error: { ...result.error, message: trace.redact(result.error.message) } } : {}),
    steps: withDecidedStep(result, tracedSteps(withUnfinishedStep(result, trace), trace.retriesPerCall(), trace.redact), trace.redact),
    end: {
      notes: (result.notes ?? []).map(trace.redact),
      answer: excerpt(result.text, trace.redact, TRACE_BOUNDS.answer),
      unavailable: (result.unavailable ?? []).map((entry) => ({ ...entry, reason: excerpt(entry.reason, trace.redact, TRACE_BOUNDS.toolResult) })),
    },
  };
}

/**
 * Calls cut off mid-step are kept as one last step, "interrupted", so the trace shows them; a
 * model call the run ended waiting on, as a last step "no answer" with its endpoint and wait.
 */
function withUnfinishedStep(result: ExpertRunResult, trace: SessionRunTrace): StepRecord[] {
  const calls = result.unfinishedToolCalls ?? [];
  const last = { index: result.steps.length, inputTokens: 0, outputTokens: 0, text: "" };
  if (calls.length > 0) return [...result.steps, { ...last, finishReason: "interrupted", toolCalls: calls }];
  if (result.pendingModelCall)
    return [...result.steps, { ...last, finishReason: "no answer", toolCalls: [], model: trace.pendingModel(result.pendingModelCall.startedAt, Date.now()) }];
  return result.steps;
}

/**
 * A resumed run's decisions on the calls its paused step left waiting (approved and run, or
 * declined) come first, as a step of their own, "approval", with no model call: the trace shows
 * each decision before the steps it led to. Indexes are renumbered after the retries were matched.
 */
function withDecidedStep(result: ExpertRunResult, traced: StepRecord[], redact: Redact): StepRecord[] {
  const decided = result.decidedCalls ?? [];
  if (decided.length === 0) return traced;
  const [step] = tracedSteps([{ index: 0, finishReason: "approval", inputTokens: 0, outputTokens: 0, text: "", toolCalls: decided }], [], redact);
  return [...(step ? [step] : []), ...traced].map((entry, index) => ({ ...entry, index }));
}

/**
 * The index row of a run a session restart cut off (RunLog.abandonUnfinished), from what its
 * record held when it started: outcome `interrupted`, ended at the restart. Its steps, tokens and
 * tool calls were never recorded (they are stored when a run ends), so they count as none, and
 * its cost is unknown (null).
 */
export function interruptedIndexEntry(run: StoredRun, endedAt: number): QueuedRun {
  return {
    row: {
      runId: run.id,
      skill: run.skill,
      expert: run.expert,
      userId: run.userId,
      userLogin: run.caller?.login ?? null,
      userEmail: run.caller?.email ?? null,
      threadId: run.threadId,
      catalogVersion: run.catalogVersion,
      provider: run.provider,
      model: run.model ?? defaultModelId(run.provider),
      outcome: "interrupted",
      traceId: run.traceId ?? traceIdOf(run.id),
      startedAt: run.startedAt,
      endedAt,
      elapsedMs: Math.max(0, endedAt - run.startedAt),
      steps: 0,
      inputTokens: 0,
      outputTokens: 0,
      toolCalls: 0,
      toolErrors: 0,
      downstreamBytes: 0,
      cost: null,
      budgetExhausted: null,
      refusedCalls: 0,
    },
    calls: [],
    retries: 0,
  };
}

/** A stored run names its model only when the expert did; otherwise it ran on its provider's default. */
function defaultModelId(provider: string): string {
  return Object.hasOwn(DEFAULT_MODEL_IDS, provider) ? DEFAULT_MODEL_IDS[provider as keyof typeof DEFAULT_MODEL_IDS] : "unknown";
}
