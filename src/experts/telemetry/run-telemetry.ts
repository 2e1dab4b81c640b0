import type { ExpertConfig } from "../../catalog/catalog-schema";
import type { ExpertCallRequest } from "../core/call-types";
import type { ExpertRunResult, StepRecord } from "../core/run-types";
import type { SessionRunTrace } from "../trace/session-run-trace";
import { type OtelConfig, otelConfig, sampled } from "./otel-config";
import { jsonSpan, SCOPE } from "./otlp-json";
import { runSpans } from "./run-spans";
import { type ExportCounts, SpanExporter, type SpanExporterOptions } from "./span-exporter";

/** A run as it ended, in the session: what its spans are built from. */
export interface EndedRun {
  request: ExpertCallRequest;
  trace: SessionRunTrace;
  expert: ExpertConfig;
  /** The model id the run used (the expert's, or its provider's default). */
  model: string;
  startedAt: number;
  endedAt: number;
  result: ExpertRunResult;
  /** The steps as stored: redacted, bounded. */
  steps: readonly StepRecord[];
  cost: number | null;
}

/**
 * A session's OpenTelemetry export (docs/operating.md#opentelemetry): off unless the tenant set
 * OTEL_EXPORTER_OTLP_ENDPOINT. A run's spans are built after it ended and handed to the exporter;
 * the session keeps itself alive for the flush with `waitUntil`, never the call.
 */
export class RunTelemetry {
  /** Read at the first run that ends: a change to the vars is a new deployment, so a new instance. */
  private export: { config: OtelConfig; exporter: SpanExporter } | null | undefined;

  constructor(
    private readonly env: Env,
    private readonly keepAlive: (work: Promise<void>) => void,
    private readonly options: SpanExporterOptions = {},
  ) {}

  runEnded(run: EndedRun): void {
    const exporting = this.exporting();
    const { trace, request } = run;
    if (exporting === null || !sampled(trace.traceId, exporting.config.ratio, trace.context.sampled)) return;
    const spans = runSpans({
      traceId: trace.traceId,
      spanId: trace.context.spanId,
      ...(trace.parentSpanId === undefined ? {} : { parentSpanId: trace.parentSpanId }),
      ...(trace.context.traceState === undefined ? {} : { traceState: trace.context.traceState }),
      runId: request.runId,
      skill: request.skill,
      expert: run.expert,
      model: run.model,
      startedAt: run.startedAt,
      endedAt: run.endedAt,
      result: run.result,
      steps: run.steps,
      ...(request.mcpRequest === undefined ? {} : { mcp: request.mcpRequest }),
      cost: run.cost,
      toolSpanId: trace.toolSpanId,
    });
    this.keepAlive(exporting.exporter.enqueue(spans.map(jsonSpan)));
  }

  /** Spans sent, dropped and waiting, since this session instance started. */
  totals(): ExportCounts {
    return this.export?.exporter.totals() ?? { sent: 0, dropped: 0, queued: 0 };
  }

  private exporting(): { config: OtelConfig; exporter: SpanExporter } | null {
    if (this.export !== undefined) return this.export;
    const config = otelConfig(this.env);
    const resource = { "service.name": SCOPE.name, "service.version": SCOPE.version, "slipsnisse.tenant": this.env.TENANT };
    this.export = config === undefined ? null : { config, exporter: new SpanExporter(config, resource, this.options) };
    return this.export;
  }
}
