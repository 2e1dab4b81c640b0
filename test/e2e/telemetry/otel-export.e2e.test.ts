import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { JsonTraceSerializer } from "@opentelemetry/otlp-transformer";
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from "@opentelemetry/sdk-trace";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { readFixtureStats } from "../../fixtures/fixture-stats-client";
import { sdkReencoded, withoutDefaults } from "../harness/otlp-sdk-encoding";
import { waitFor } from "../../support/wait-for";
import { type EchoExpertStack, fakeModelExpert, startEchoExpertStack } from "../harness/echo-expert-stack";
import { textReply, toolCallsReply, toolResultMessages } from "../harness/fake-openai-server";
import { loadCatalog } from "../harness/catalog-admin";
import { startInstrumentedMcpServer } from "../harness/otel-instrumented-mcp-server";
import { attributeOf, type OtlpReceiver, type OtlpSpan, startOtlpReceiver } from "../harness/otlp-receiver";

const COLLECTOR_KEY = "otel-5ecr3t-key-7731";
const traceMetaSchema = z.object({ runId: z.uuid(), traceId: z.string() });

/**
 * Under `wrangler dev` with OTEL_EXPORTER_OTLP_ENDPOINT set (its own server: the shared one has no
 * such vars), a real SDK client calls an expert inside its own span, and the receiver gets one
 * trace: the caller's span, `invoke_agent` under it, `chat` and `execute_tool` under that. A
 * collector that answers 500 or hangs costs the call nothing, and the run is still recorded.
 */
describe("OpenTelemetry export end to end", () => {
  let receiver: OtlpReceiver;
  let stack: EchoExpertStack;
  let client: Client;

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    stack = await startEchoExpertStack({
      tag: "otel",
      experts: (model) => [
        fakeModelExpert(model, { name: "echo_expert", description: "Echoes through the fixture server.", internal_tools: { fx: ["echo"] } }),
      ],
      skill: { pricing: { "openai-compatible": { "fake-cheap": { input_per_million: 1, output_per_million: 2 } } } },
      wrangler: { vars: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, OTEL_EXPORTER_OTLP_HEADERS: `x-collector-key=${COLLECTOR_KEY}` } },
    });
    stack.fake.reset((request) => {
      const results = toolResultMessages(request);
      if (results.length > 0) return textReply(`downstream said: ${results.map((r) => r.content).join(" | ")}`);
      // Whichever of the two experts asks: it calls its one downstream tool.
      const offered = request.tools?.map((tool) => tool.function.name) ?? [];
      if (offered.includes("docs__lookup")) return toolCallsReply({ name: "docs__lookup", arguments: { term: "otel" } });
      return toolCallsReply({ name: "fx__echo", arguments: { text: "traced-echo" } });
    });
    client = new Client({ name: "otel-orchestrator", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(stack.mcpUrl)));
  }, 120_000);

  afterAll(async () => {
    await client?.close();
    await stack?.stop();
    await receiver?.close();
  });

  async function call(meta: Record<string, string> = {}): Promise<{ runId: string; traceId: string; ms: number }> {
    const started = performance.now();
    const result = await client.callTool({ name: "echo_expert", arguments: { query: "echo please" }, _meta: meta });
    const ms = performance.now() - started;
    expect(result.isError).toBeFalsy();
    return { ...traceMetaSchema.parse(result._meta?.["slipsnisse.dev/trace"]), ms };
  }

  async function runRecorded(runId: string): Promise<void> {
    await waitFor(`run ${runId} in the run index`, async () => {
      const response = await fetch(`${stack.dev.baseUrl}/admin/api/runs/${runId}`, { signal: AbortSignal.timeout(5_000) });
      await response.body?.cancel();
      return response.status === 200 ? true : undefined;
    });
  }

  it("joins the caller's trace: caller span → invoke_agent → chat and execute_tool, by the conventions", async () => {
    const memory = new InMemorySpanExporter();
    const tracer = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter: memory })] }).getTracer("orchestrator");
    const callerSpan = tracer.startSpan("orchestrate");
    const { traceId, spanId } = callerSpan.spanContext();
    const answered = await call({ traceparent: `00-${traceId}-${spanId}-01`, tracestate: "orch=1" });
    callerSpan.end();
    expect(answered.traceId).toBe(traceId);
    // The orchestrator exports its own span with the SDK's encoder, as an instrumented client would.
    const posted = await fetch(`${receiver.endpoint}/v1/traces`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JsonTraceSerializer.serializeRequest(memory.getFinishedSpans()),
    });
    expect(posted.status).toBe(200);

    const trace = await waitFor("the run's spans at the receiver", () => {
      const spans = receiver.spans().filter((span) => span.traceId === traceId);
      return spans.some((span) => span.name.startsWith("invoke_agent")) ? spans : undefined;
    });
    const byName = (prefix: string): OtlpSpan[] => trace.filter((span) => span.name.startsWith(prefix));
    const [caller] = byName("orchestrate");
    const [agent] = byName("invoke_agent echo_expert");
    expect(caller?.spanId).toBe(spanId);
    expect(agent).toMatchObject({ parentSpanId: spanId, traceState: "orch=1", kind: 2 });
    expect(byName("chat fake-cheap")).toHaveLength(2);
    expect(byName("execute_tool fx__echo")).toHaveLength(1);
    for (const span of [...byName("chat"), ...byName("execute_tool")]) expect(span.parentSpanId).toBe(agent?.spanId);
    expect(attributeOf(agent?.attributes, "gen_ai.operation.name")).toBe("invoke_agent");
    expect(attributeOf(agent?.attributes, "mcp.method.name")).toBe("tools/call");
    expect(attributeOf(agent?.attributes, "mcp.protocol.version")).toMatch(/^20\d\d-\d\d-\d\d$/);
    expect(attributeOf(agent?.attributes, "jsonrpc.request.id")).toEqual(expect.any(String));
    // The client's Mcp-Session-Id, where its transport has one (this stateless 2025 call has none): the clientSessionId.
    expect(attributeOf(agent?.attributes, "mcp.session.id")).toBe(client.transport?.sessionId);
    expect(attributeOf(agent?.attributes, "slipsnisse.run.cost")).toBeGreaterThan(0);
    const [tool] = byName("execute_tool");
    expect(attributeOf(tool?.attributes, "gen_ai.tool.name")).toBe("fx__echo");
    expect(attributeOf(tool?.attributes, "gen_ai.tool.call.id")).toEqual(expect.any(String));
    expect(attributeOf(byName("chat")[0]?.attributes, "gen_ai.provider.name")).toBe("openai");

    // The downstream call named its execute_tool span as its parent, in the header and in _meta (SEP-414).
    const stats = await readFixtureStats(stack.fxBase);
    expect(stats.callTraceparents.at(-1)).toBe(`00-${traceId}-${tool?.spanId}-01`);
    expect(stats.callMetaTraces.at(-1)).toEqual({ traceparent: `00-${traceId}-${tool?.spanId}-01`, tracestate: "orch=1" });

    // Decoded with the OpenTelemetry project's own encoder: what it would send for these spans.
    const ours = receiver.exports.filter((received) => received.headers["x-collector-key"] !== undefined);
    expect(ours.length).toBeGreaterThan(0);
    for (const received of ours) {
      expect(received.headers["x-collector-key"]).toBe(COLLECTOR_KEY);
      expect(withoutDefaults(received.body)).toEqual(withoutDefaults(sdkReencoded(received.body)));
    }
    expect(stack.dev.logs()).not.toContain(COLLECTOR_KEY);
  });

  it("exports nothing of a caller's trace that is not sampled", async () => {
    const unsampled = "6bf92f3577b34da6a3ce929d0e0e4738";
    const sampledTrace = "7bf92f3577b34da6a3ce929d0e0e4739";
    await call({ traceparent: `00-${unsampled}-00f067aa0ba902b7-00` });
    await call({ traceparent: `00-${sampledTrace}-00f067aa0ba902b7-01` });
    // One session, one exporter queue, sent in order: once the later run's spans are in, the earlier ones would be too.
    await waitFor("the sampled run's spans", () => (receiver.spans().some((span) => span.traceId === sampledTrace) ? true : undefined));
    expect(receiver.spans().filter((span) => span.traceId === unsampled)).toEqual([]);
  });

  it("shows a downstream server instrumented with the OpenTelemetry SDK under the expert's tool call", async () => {
    const downstream = await startInstrumentedMcpServer(receiver.endpoint);
    try {
      await loadCatalog(stack.dev.baseUrl, {
        skills: {
          default: {
            servers: {
              fx: { url: `${stack.fxBase}/mcp`, transport: "streamable-http" },
              docs: { url: `${downstream.origin}/mcp`, transport: "streamable-http" },
            },
            experts: [
              fakeModelExpert(stack.fake, { name: "echo_expert", description: "Echoes through the fixture server.", internal_tools: { fx: ["echo"] } }),
              fakeModelExpert(stack.fake, { name: "lookup_expert", description: "Looks terms up.", internal_tools: { docs: ["lookup"] } }),
            ],
          },
        },
      });
      const memory = new InMemorySpanExporter();
      const callerSpan = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter: memory })] })
        .getTracer("orchestrator")
        .startSpan("orchestrate");
      const { traceId, spanId } = callerSpan.spanContext();
      const result = await client.callTool({ name: "lookup_expert", arguments: { query: "otel" }, _meta: { traceparent: `00-${traceId}-${spanId}-01` } });
      callerSpan.end();
      expect(result.isError).toBeFalsy();
      const trace = await waitFor("the downstream server's span in the run's trace", () => {
        const spans = receiver.spans().filter((span) => span.traceId === traceId);
        return spans.some((span) => span.name === "tools/call lookup") && spans.some((span) => span.name.startsWith("execute_tool")) ? spans : undefined;
      });
      const agent = trace.find((span) => span.name === "invoke_agent lookup_expert");
      const tool = trace.find((span) => span.name === "execute_tool docs__lookup");
      const downstreamSpan = trace.find((span) => span.name === "tools/call lookup");
      expect(agent?.parentSpanId).toBe(spanId);
      expect(tool?.parentSpanId).toBe(agent?.spanId);
      expect(downstreamSpan?.parentSpanId).toBe(tool?.spanId);
    } finally {
      await downstream.stop();
    }
  });

  it("answers and records the run while the collector answers 500, and counts the dropped spans", async () => {
    receiver.setMode(500);
    const { runId } = await call();
    await runRecorded(runId);
    await waitFor("the dropped spans in the log", () => (/OpenTelemetry spans dropped.*HTTP 500/.test(stack.dev.logs()) ? true : undefined));
    expect(stack.dev.logs()).not.toContain(COLLECTOR_KEY);
  });

  it("answers and records the run while the collector hangs", async () => {
    receiver.setMode("hang");
    const first = await call();
    await waitFor("an export hanging at the collector", () => (receiver.hanging() > 0 ? true : undefined));
    // The export of the first run still hangs (up to 5 s an attempt): the next call is not held by it.
    const second = await call();
    expect(second.ms).toBeLessThan(5_000);
    await runRecorded(first.runId);
    await runRecorded(second.runId);
    receiver.setMode("ok");
  });
});
