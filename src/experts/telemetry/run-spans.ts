import type { ExpertConfig } from "../../catalog/catalog-schema";
import { newSpanId } from "../../downstream/trace-context";
import type { ExpertRunResult, StepRecord, ToolCallRecord } from "../core/run-types";
import { type Attributes, type SpanData, SpanKind, StatusCode } from "./otlp-json";

/** What a run's spans are built from, after it ended: its stored (redacted) steps, never its content. */
export interface RunSpanInput {
  traceId: string;
  /** The run's own span: the parent of every request the run made (trace-context.ts). */
  spanId: string;
  /** The caller's span (a `traceparent` in the call's `_meta`); absent: the run is the trace's root. */
  parentSpanId?: string;
  traceState?: string;
  runId: string;
  skill: string;
  expert: Pick<ExpertConfig, "name" | "provider" | "model">;
  model: string;
  startedAt: number;
  endedAt: number;
  result: Pick<ExpertRunResult, "outcome" | "usage" | "error">;
  steps: readonly StepRecord[];
  /** The MCP request that started the run; absent for a call with none (an eval run). */
  mcp?: { requestId: string | number; clientSessionId?: string; protocolVersion?: string };
  cost: number | null;
  /** The span id each tool call's downstream request carried as its parent (trace-context.ts), by tool call id. */
  toolSpanId?: (toolCallId: string) => string | undefined;
}

/**
 * `gen_ai.provider.name` by the GenAI conventions' well-known values where one fits: an
 * openai-compatible endpoint speaks OpenAI's API; Workers AI has no listed value, so it is named
 * as the conventions ask of others (`<vendor>.<product>`).
 */
const PROVIDER_NAMES: Readonly<Record<ExpertConfig["provider"], string>> = {
  google: "gcp.gemini",
  "openai-compatible": "openai",
  "workers-ai": "cloudflare.workers_ai",
};

/**
 * A run as OpenTelemetry spans, by the GenAI and MCP semantic conventions: `invoke_agent
 * <expert>`, the server span of the caller's `tools/call` (so it carries the MCP attributes), with
 * a `chat <model>` span per model call and an `execute_tool <tool>` span per tool call under it.
 * Budget ends, cancels and pauses are events of the run's span; decisions on approvals and
 * questions, events of the tool's span. No prompt, argument, answer or result text.
 */
export function runSpans(input: RunSpanInput): SpanData[] {
  const provider = PROVIDER_NAMES[input.expert.provider];
  const child = { traceId: input.traceId, parentSpanId: input.spanId };
  const spans: SpanData[] = [rootSpan(input, provider)];
  for (const step of input.steps) {
    const model = step.model;
    const modelStart = model?.startedAt ?? input.startedAt;
    if (model) {
      spans.push({
        ...child,
        spanId: newSpanId(),
        name: `chat ${model.model}`,
        kind: SpanKind.client,
        startMs: modelStart,
        endMs: modelStart + model.latencyMs,
        attributes: {
          "gen_ai.operation.name": "chat",
          "gen_ai.provider.name": provider,
          "gen_ai.request.model": model.model,
          "gen_ai.response.finish_reasons": model.pending ? undefined : [step.finishReason],
          "gen_ai.usage.input_tokens": step.inputTokens,
          "gen_ai.usage.output_tokens": step.outputTokens,
          "server.address": model.endpoint,
          "slipsnisse.model.retries": model.retries,
        },
        ...(model.pending ? { status: { code: StatusCode.error, message: "the model had not answered when the run ended" } } : {}),
      });
    }
    const toolStart = model ? modelStart + model.latencyMs : input.startedAt;
    for (const call of step.toolCalls) spans.push(toolSpan(child, input.toolSpanId?.(call.toolCallId) ?? newSpanId(), call, toolStart, input.endedAt));
  }
  return spans;
}

function rootSpan(input: RunSpanInput, provider: string): SpanData {
  const { result, mcp } = input;
  const events: NonNullable<SpanData["events"]> = [];
  const budget = result.usage.budgetExhausted;
  if (budget !== null) events.push({ name: "slipsnisse.budget_exhausted", timeMs: input.endedAt, attributes: { "slipsnisse.budget.kind": budget } });
  if (result.outcome === "cancelled") events.push({ name: "slipsnisse.run.cancelled", timeMs: input.endedAt });
  if (result.outcome === "paused") events.push({ name: "slipsnisse.run.paused", timeMs: input.endedAt });
  const attributes: Attributes = {
    "gen_ai.operation.name": "invoke_agent",
    "gen_ai.agent.name": input.expert.name,
    "gen_ai.provider.name": provider,
    "gen_ai.request.model": input.model,
    "gen_ai.usage.input_tokens": result.usage.inputTokens,
    "gen_ai.usage.output_tokens": result.usage.outputTokens,
    // The MCP conventions' server span of `tools/call <tool>`: the expert is the tool called.
    "mcp.method.name": "tools/call",
    "gen_ai.tool.name": input.expert.name,
    "mcp.session.id": mcp?.clientSessionId,
    "mcp.protocol.version": mcp?.protocolVersion,
    "jsonrpc.request.id": mcp === undefined ? undefined : String(mcp.requestId),
    "error.type": result.outcome === "error" ? (result.error?.kind ?? "error") : undefined,
    "slipsnisse.run.id": input.runId,
    "slipsnisse.skill": input.skill,
    "slipsnisse.run.outcome": result.outcome,
    "slipsnisse.run.steps": result.usage.steps,
    "slipsnisse.run.tool_calls": result.usage.toolCalls,
    "slipsnisse.run.retries": result.usage.retries,
    // At the skill's catalog prices, in the currency they are written in; absent without prices.
    "slipsnisse.run.cost": input.cost ?? undefined,
  };
  return {
    traceId: input.traceId,
    spanId: input.spanId,
    ...(input.parentSpanId === undefined ? {} : { parentSpanId: input.parentSpanId }),
    ...(input.traceState === undefined ? {} : { traceState: input.traceState }),
    name: `invoke_agent ${input.expert.name}`,
    kind: SpanKind.server,
    startMs: input.startedAt,
    endMs: input.endedAt,
    attributes,
    events,
    // The error kind only: an error's message can quote what the run read.
    status: result.outcome === "error" ? { code: StatusCode.error, message: result.error?.kind ?? "error" } : { code: StatusCode.unset },
  };
}

function toolSpan(parent: { traceId: string; parentSpanId: string }, spanId: string, call: ToolCallRecord, fallbackStart: number, runEnd: number): SpanData {
  const start = call.startedAt ?? fallbackStart;
  const failed = call.status === "error";
  const decision = call.decision;
  return {
    ...parent,
    spanId,
    name: `execute_tool ${call.name}`,
    // A call that reached a downstream server is a client call to it; the others never left.
    kind: call.server === undefined ? SpanKind.internal : SpanKind.client,
    startMs: start,
    endMs: Math.min(runEnd, start + call.elapsedMs),
    attributes: {
      "gen_ai.operation.name": "execute_tool",
      "gen_ai.tool.name": call.name,
      "gen_ai.tool.call.id": call.toolCallId,
      "gen_ai.tool.type": "extension",
      "mcp.method.name": call.server === undefined ? undefined : "tools/call",
      "error.type": failed ? "tool_error" : undefined,
      "slipsnisse.tool.server": call.server,
      "slipsnisse.tool.status": call.status,
      "slipsnisse.tool.result_bytes": call.bytes,
    },
    events:
      decision === undefined
        ? []
        : [
            {
              name: "slipsnisse.decision",
              timeMs: start,
              attributes: { "slipsnisse.decision.outcome": decision.outcome, "slipsnisse.decision.by": decision.by },
            },
          ],
    status: failed ? { code: StatusCode.error, message: "tool_error" } : { code: StatusCode.unset },
  };
}
