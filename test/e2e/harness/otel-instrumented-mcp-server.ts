import { defaultTextMapGetter, ROOT_CONTEXT, SpanKind } from "@opentelemetry/api";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { JsonTraceSerializer } from "@opentelemetry/otlp-transformer";
import { type ReadableSpan, SimpleSpanProcessor, type SpanExporter, TracerProvider } from "@opentelemetry/sdk-trace";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { readJsonBody } from "../../fixtures/fixture-stats";
import { listenOnLoopback, type LoopbackServer } from "../../fixtures/loopback-http";
import { serveStatelessRequest } from "../../fixtures/stateless-mcp-request";

/** Sends the SDK's spans to an OTLP/HTTP endpoint with the SDK's own JSON encoder. */
function otlpJsonExporter(endpoint: string): SpanExporter {
  return {
    export(spans: ReadableSpan[], done) {
      fetch(`${endpoint}/v1/traces`, { method: "POST", headers: { "content-type": "application/json" }, body: JsonTraceSerializer.serializeRequest(spans) })
        .then(async (response) => {
          await response.body?.cancel();
          done({ code: response.ok ? 0 : 1 });
        })
        .catch(() => done({ code: 1 }));
    },
    shutdown: async () => undefined,
  };
}

/**
 * A downstream MCP server instrumented as a team's own would be, with the OpenTelemetry JS SDK:
 * its one tool, `lookup`, continues the trace context of the `tools/call` (`params._meta`,
 * SEP-414) in a server span of its own, exported to `endpoint`.
 */
export async function startInstrumentedMcpServer(endpoint: string): Promise<LoopbackServer> {
  const tracer = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter: otlpJsonExporter(endpoint) })] }).getTracer("downstream-docs");
  const propagator = new W3CTraceContextPropagator();
  return listenOnLoopback(async (req, res) => {
    const body = await readJsonBody(req);
    const server = new McpServer({ name: "instrumented", version: "1.0.0" });
    server.registerTool("lookup", { description: "Looks a term up.", inputSchema: { term: z.string() } }, async ({ term }, extra) => {
      const parent = propagator.extract(ROOT_CONTEXT, { ...extra._meta }, defaultTextMapGetter);
      const span = tracer.startSpan(
        "tools/call lookup",
        { kind: SpanKind.SERVER, attributes: { "mcp.method.name": "tools/call", "gen_ai.tool.name": "lookup" } },
        parent,
      );
      span.end();
      return { content: [{ type: "text", text: `${term}: found` }] };
    });
    await serveStatelessRequest(server, req, res, body);
  });
}
