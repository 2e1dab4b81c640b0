import { SpanKind as ApiSpanKind, type Attributes as ApiAttributes, type HrTime } from "@opentelemetry/api";
import { JsonTraceSerializer } from "@opentelemetry/otlp-transformer";
import { resourceFromAttributes } from "@opentelemetry/resources";
import type { ReadableSpan } from "@opentelemetry/sdk-trace";
import { ATTR_ERROR_TYPE, ATTR_SERVER_ADDRESS } from "@opentelemetry/semantic-conventions";
import * as incubating from "@opentelemetry/semantic-conventions/incubating";
import { describe, expect, it } from "vitest";
import { exportRequest, jsonSpan, SCOPE, type SpanData } from "../../../../src/experts/telemetry/otlp-json";
import { runSpans, type RunSpanInput } from "../../../../src/experts/telemetry/run-spans";
import { withoutDefaults } from "../../../e2e/harness/otlp-sdk-encoding";

const TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
const RUN_SPAN = "a1b2c3d4e5f60718";
const CALLER_SPAN = "00f067aa0ba902b7";
const T0 = 1_764_390_000_123.5;

/** A run with one model call asking for two tools (one fails), then a budget end, as the session stores it. */
function endedRun(overrides: Partial<RunSpanInput> = {}): RunSpanInput {
  return {
    traceId: TRACE_ID,
    spanId: RUN_SPAN,
    parentSpanId: CALLER_SPAN,
    traceState: "vendor=abc",
    runId: "2b1c7f0e-0000-4000-8000-000000000001",
    skill: "docs",
    expert: { name: "ask_docs", provider: "openai-compatible", model: "fake-cheap" },
    model: "fake-cheap",
    startedAt: T0,
    endedAt: T0 + 900,
    result: {
      outcome: "budget_exhausted",
      usage: {
        steps: 1,
        inputTokens: 120,
        outputTokens: 30,
        toolCalls: 2,
        refusedToolCalls: 0,
        downstreamBytesRead: 10,
        bytesReturned: 5,
        elapsedMs: 900,
        budgetExhausted: "steps",
        retries: 1,
      },
    },
    steps: [
      {
        index: 0,
        finishReason: "tool-calls",
        inputTokens: 120,
        outputTokens: 30,
        text: "SECRET-STEP-TEXT",
        model: { provider: "openai", model: "fake-cheap", latencyMs: 300, retries: 1, startedAt: T0 + 10 },
        toolCalls: [
          {
            toolCallId: "call-1",
            name: "fx__echo",
            status: "ok",
            bytes: 10,
            elapsedMs: 50,
            startedAt: T0 + 320,
            server: "fx",
            tool: "echo",
            args: "SECRET-ARGS",
            result: "SECRET-RESULT",
          },
          {
            toolCallId: "call-2",
            name: "fx__boom",
            status: "error",
            bytes: 0,
            elapsedMs: 20,
            startedAt: T0 + 330,
            server: "fx",
            tool: "boom",
            error: "SECRET-ERROR",
          },
        ],
      },
    ],
    mcp: { requestId: 7, clientSessionId: "client-session-1", protocolVersion: "2025-11-25" },
    cost: 0.000123,
    ...overrides,
  };
}

const hrTime = (ms: number): HrTime => [Math.floor(ms / 1000), Math.round((ms % 1000) * 1e6)];
const API_KINDS = { 1: ApiSpanKind.INTERNAL, 2: ApiSpanKind.SERVER, 3: ApiSpanKind.CLIENT } as const;

/** The same span as the OpenTelemetry SDK holds it, for its own OTLP/JSON serializer. */
function sdkSpan(span: SpanData, resource: ReturnType<typeof resourceFromAttributes>): ReadableSpan {
  const attributes = Object.fromEntries(Object.entries(span.attributes).filter(([, value]) => value !== undefined)) as ApiAttributes;
  return {
    name: span.name,
    kind: API_KINDS[span.kind],
    spanContext: () => ({
      traceId: span.traceId,
      spanId: span.spanId,
      traceFlags: 1,
      ...(span.traceState ? { traceState: { serialize: () => span.traceState ?? "" } as never } : {}),
    }),
    ...(span.parentSpanId ? { parentSpanContext: { traceId: span.traceId, spanId: span.parentSpanId, traceFlags: 1 } } : {}),
    startTime: hrTime(span.startMs),
    endTime: hrTime(span.endMs),
    status: { code: span.status?.code ?? 0, ...(span.status?.message ? { message: span.status.message } : {}) },
    attributes,
    links: [],
    events: (span.events ?? []).map((event) => ({ name: event.name, time: hrTime(event.timeMs), attributes: (event.attributes ?? {}) as ApiAttributes })),
    duration: hrTime(span.endMs - span.startMs),
    ended: true,
    resource,
    instrumentationScope: { ...SCOPE },
    droppedAttributesCount: 0,
    droppedEventsCount: 0,
    droppedLinksCount: 0,
  };
}

describe("the OTLP/JSON encoding", () => {
  it("is the OpenTelemetry SDK's own encoding of the same spans (@opentelemetry/otlp-transformer)", () => {
    const resource = { "service.name": "slipsnisse", "slipsnisse.tenant": "default" };
    const spans = runSpans(endedRun());
    const ours = exportRequest(resource, spans.map(jsonSpan));
    const sdkResource = resourceFromAttributes(resource);
    const bytes = JsonTraceSerializer.serializeRequest(spans.map((span) => sdkSpan(span, sdkResource)));
    const theirs = JSON.parse(new TextDecoder().decode(bytes)) as unknown;
    expect(withoutDefaults(ours)).toEqual(withoutDefaults(theirs));
  });
});

const CONVENTION_NAMES = new Set<string>([
  ATTR_ERROR_TYPE,
  ATTR_SERVER_ADDRESS,
  ...Object.entries(incubating)
    .filter(([name, value]) => /^ATTR_(GEN_AI|MCP|JSONRPC)_/.test(name) && typeof value === "string")
    .map(([, value]) => value as string),
]);

describe("a run's spans by the GenAI and MCP semantic conventions", () => {
  const spans = runSpans(endedRun());
  const [root, chat, echo, boom] = spans;

  it("uses only the conventions' attribute names, and its own under slipsnisse.*", () => {
    for (const span of spans) {
      for (const key of Object.keys(span.attributes)) {
        if (!key.startsWith("slipsnisse.")) expect(CONVENTION_NAMES, `${span.name}: ${key}`).toContain(key);
      }
    }
    expect(root?.attributes[incubating.ATTR_GEN_AI_OPERATION_NAME]).toBe(incubating.GEN_AI_OPERATION_NAME_VALUE_INVOKE_AGENT);
    expect(chat?.attributes[incubating.ATTR_GEN_AI_OPERATION_NAME]).toBe(incubating.GEN_AI_OPERATION_NAME_VALUE_CHAT);
    expect(echo?.attributes[incubating.ATTR_GEN_AI_OPERATION_NAME]).toBe(incubating.GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL);
    expect(chat?.attributes[incubating.ATTR_GEN_AI_PROVIDER_NAME]).toBe(incubating.GEN_AI_PROVIDER_NAME_VALUE_OPENAI);
  });

  it("hangs invoke_agent under the caller's span, with the MCP server attributes, and chat and execute_tool under it", () => {
    expect(spans.map((span) => span.name)).toEqual(["invoke_agent ask_docs", "chat fake-cheap", "execute_tool fx__echo", "execute_tool fx__boom"]);
    expect(root).toMatchObject({ traceId: TRACE_ID, spanId: RUN_SPAN, parentSpanId: CALLER_SPAN, traceState: "vendor=abc", kind: 2 });
    expect(root?.attributes).toMatchObject({
      [incubating.ATTR_MCP_METHOD_NAME]: "tools/call",
      [incubating.ATTR_MCP_SESSION_ID]: "client-session-1",
      [incubating.ATTR_MCP_PROTOCOL_VERSION]: "2025-11-25",
      [incubating.ATTR_JSONRPC_REQUEST_ID]: "7",
      [incubating.ATTR_GEN_AI_AGENT_NAME]: "ask_docs",
      [incubating.ATTR_GEN_AI_USAGE_INPUT_TOKENS]: 120,
      "slipsnisse.run.cost": 0.000123,
    });
    for (const span of [chat, echo, boom]) expect(span).toMatchObject({ traceId: TRACE_ID, parentSpanId: RUN_SPAN });
    expect(chat?.attributes).toMatchObject({
      [incubating.ATTR_GEN_AI_RESPONSE_FINISH_REASONS]: ["tool-calls"],
      [incubating.ATTR_GEN_AI_USAGE_OUTPUT_TOKENS]: 30,
    });
    expect(chat).toMatchObject({ startMs: T0 + 10, endMs: T0 + 310 });
    expect(echo?.attributes).toMatchObject({ [incubating.ATTR_GEN_AI_TOOL_NAME]: "fx__echo", [incubating.ATTR_GEN_AI_TOOL_CALL_ID]: "call-1" });
    expect(boom?.attributes[ATTR_ERROR_TYPE]).toBe("tool_error");
    // The span id the downstream request carried as its parent is the tool span's own.
    const named = runSpans(endedRun({ toolSpanId: (id) => (id === "call-1" ? "c0ffee00c0ffee00" : undefined) }));
    expect(named[2]?.spanId).toBe("c0ffee00c0ffee00");
    expect(named[3]?.spanId).toMatch(/^(?!0{16})[0-9a-f]{16}$/);
    expect(boom?.status?.code).toBe(2);
    expect(root?.events?.map((event) => event.name)).toEqual(["slipsnisse.budget_exhausted"]);
  });

  it("carries no prompt, argument, result or error text", () => {
    expect(JSON.stringify(spans)).not.toMatch(/SECRET-/);
  });

  it("is a root span without a caller, and records cancels, pauses and errors on the run's span", () => {
    const { parentSpanId: _none, traceState: _state, ...alone } = endedRun();
    expect(runSpans(alone)[0]?.parentSpanId).toBeUndefined();
    const usage = { ...endedRun().result.usage, budgetExhausted: null };
    expect(runSpans(endedRun({ result: { outcome: "cancelled", usage } }))[0]?.events?.map((event) => event.name)).toEqual(["slipsnisse.run.cancelled"]);
    expect(runSpans(endedRun({ result: { outcome: "paused", usage } }))[0]?.events?.map((event) => event.name)).toEqual(["slipsnisse.run.paused"]);
    const failed = runSpans(endedRun({ result: { outcome: "error", usage, error: { kind: "model_error", message: "SECRET-MESSAGE" } } }))[0];
    expect(failed?.status).toEqual({ code: 2, message: "model_error" });
    expect(failed?.attributes[ATTR_ERROR_TYPE]).toBe("model_error");
    expect(JSON.stringify(failed)).not.toContain("SECRET-");
  });
});
