/**
 * The OTLP/HTTP JSON encoding of spans (opentelemetry-proto, `ExportTraceServiceRequest`), by
 * hand: it is a few plain shapes, and the OpenTelemetry JS exporters need Node APIs and weigh far
 * more than this. OTLP/JSON differs from proto3's JSON mapping in two places we rely on: trace and
 * span ids are hex strings (not base64), and enum values are integers. 64-bit integers are strings.
 */

/** An attribute value as a span builder gives it; undefined attributes are left out. */
export type AttributeValue = string | number | boolean | readonly string[];
export type Attributes = Readonly<Record<string, AttributeValue | undefined>>;

/** `Span.SpanKind` of opentelemetry-proto's trace.proto. */
export const SpanKind = { internal: 1, server: 2, client: 3 } as const;
/** `Status.StatusCode` of opentelemetry-proto's trace.proto. */
export const StatusCode = { unset: 0, ok: 1, error: 2 } as const;

/** One span as the span builder makes it: times in epoch milliseconds. */
export interface SpanData {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  traceState?: string;
  name: string;
  kind: (typeof SpanKind)[keyof typeof SpanKind];
  startMs: number;
  endMs: number;
  attributes: Attributes;
  events?: Array<{ name: string; timeMs: number; attributes?: Attributes }>;
  status?: { code: (typeof StatusCode)[keyof typeof StatusCode]; message?: string };
}

type JsonAnyValue =
  | { stringValue: string }
  | { intValue: string }
  | { doubleValue: number }
  | { boolValue: boolean }
  | { arrayValue: { values: JsonAnyValue[] } };
export interface JsonKeyValue {
  key: string;
  value: JsonAnyValue;
}

export interface JsonSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  traceState?: string;
  name: string;
  kind: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: JsonKeyValue[];
  events: Array<{ timeUnixNano: string; name: string; attributes: JsonKeyValue[] }>;
  status: { code: number; message?: string };
}

/** `ExportTraceServiceRequest` as OTLP/JSON. */
export interface ExportTraceRequest {
  resourceSpans: Array<{
    resource: { attributes: JsonKeyValue[] };
    scopeSpans: Array<{ scope: { name: string; version: string }; spans: JsonSpan[] }>;
  }>;
}

export const SCOPE = { name: "slipsnisse", version: "0.1.0" } as const;

/** One request body for `spans`, all from this deployment (`resource`). */
export function exportRequest(resource: Attributes, spans: readonly JsonSpan[]): ExportTraceRequest {
  return { resourceSpans: [{ resource: { attributes: keyValues(resource) }, scopeSpans: [{ scope: { ...SCOPE }, spans: [...spans] }] }] };
}

export function jsonSpan(span: SpanData): JsonSpan {
  return {
    traceId: span.traceId,
    spanId: span.spanId,
    ...(span.parentSpanId === undefined ? {} : { parentSpanId: span.parentSpanId }),
    ...(span.traceState === undefined ? {} : { traceState: span.traceState }),
    name: span.name,
    kind: span.kind,
    startTimeUnixNano: unixNano(span.startMs),
    endTimeUnixNano: unixNano(Math.max(span.startMs, span.endMs)),
    attributes: keyValues(span.attributes),
    events: (span.events ?? []).map((event) => ({ timeUnixNano: unixNano(event.timeMs), name: event.name, attributes: keyValues(event.attributes ?? {}) })),
    status: span.status ?? { code: StatusCode.unset },
  };
}

function keyValues(attributes: Attributes): JsonKeyValue[] {
  return Object.entries(attributes).flatMap(([key, value]) => (value === undefined ? [] : [{ key, value: anyValue(value) }]));
}

function anyValue(value: AttributeValue): JsonAnyValue {
  if (typeof value === "string") return { stringValue: value };
  if (typeof value === "boolean") return { boolValue: value };
  if (typeof value === "number") return Number.isSafeInteger(value) ? { intValue: String(value) } : { doubleValue: value };
  return { arrayValue: { values: value.map((item) => ({ stringValue: item })) } };
}

/** Epoch milliseconds as the nanosecond string OTLP wants (a double cannot hold nanoseconds exactly). */
function unixNano(ms: number): string {
  const whole = Math.floor(ms);
  const micros = Math.round((ms - whole) * 1000);
  return `${BigInt(whole) * 1_000_000n + BigInt(micros) * 1000n}`;
}
