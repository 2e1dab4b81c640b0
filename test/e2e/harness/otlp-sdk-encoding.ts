import type { Attributes, HrTime, SpanKind } from "@opentelemetry/api";
import { JsonTraceSerializer } from "@opentelemetry/otlp-transformer";
import { resourceFromAttributes } from "@opentelemetry/resources";
import type { ReadableSpan } from "@opentelemetry/sdk-trace";
import type { OtlpKeyValue, OtlpTraceRequest } from "./otlp-receiver";

function plain(value: OtlpKeyValue["value"]): unknown {
  if (value.arrayValue) return value.arrayValue.values.map(plain);
  if (value.intValue !== undefined) return Number(value.intValue);
  return value.stringValue ?? value.doubleValue ?? value.boolValue;
}

function attributesOf(list: OtlpKeyValue[] | undefined): Attributes {
  return Object.fromEntries((list ?? []).map((entry) => [entry.key, plain(entry.value)])) as Attributes;
}

function hrTime(unixNano: string): HrTime {
  const nanos = BigInt(unixNano);
  return [Number(nanos / 1_000_000_000n), Number(nanos % 1_000_000_000n)];
}

/**
 * A received OTLP/JSON request read back into the OpenTelemetry SDK's own span type and encoded
 * again by its own serializer (@opentelemetry/otlp-transformer): equal to what was received only
 * when every field we sent is one the SDK knows, in the form and place it puts it.
 */
export function sdkReencoded(request: OtlpTraceRequest): unknown {
  const spans: ReadableSpan[] = request.resourceSpans.flatMap((resourceSpans) => {
    const resource = resourceFromAttributes(attributesOf(resourceSpans.resource?.attributes));
    return resourceSpans.scopeSpans.flatMap((scopeSpans) =>
      scopeSpans.spans.map((span): ReadableSpan => {
        const traceState = span.traceState;
        return {
          name: span.name,
          kind: (span.kind - 1) as SpanKind, // OTLP's kinds are the API's plus one (0 is UNSPECIFIED)
          spanContext: () => ({
            traceId: span.traceId,
            spanId: span.spanId,
            traceFlags: 1,
            ...(traceState ? { traceState: { serialize: () => traceState } as never } : {}),
          }),
          ...(span.parentSpanId ? { parentSpanContext: { traceId: span.traceId, spanId: span.parentSpanId, traceFlags: 1 } } : {}),
          startTime: hrTime(span.startTimeUnixNano),
          endTime: hrTime(span.endTimeUnixNano),
          status: { code: span.status?.code ?? 0, ...(span.status?.message ? { message: span.status.message } : {}) },
          attributes: attributesOf(span.attributes),
          links: [],
          events: (span.events ?? []).map((event) => ({ name: event.name, time: hrTime(event.timeUnixNano), attributes: attributesOf(event.attributes) })),
          duration: [0, 0],
          ended: true,
          resource,
          instrumentationScope: { name: scopeSpans.scope?.name ?? "", ...(scopeSpans.scope?.version ? { version: scopeSpans.scope.version } : {}) },
          droppedAttributesCount: 0,
          droppedEventsCount: 0,
          droppedLinksCount: 0,
        };
      }),
    );
  });
  return JSON.parse(new TextDecoder().decode(JsonTraceSerializer.serializeRequest(spans))) as unknown;
}

/**
 * What the SDK adds that OTLP leaves optional (zero counts, empty links, flags, schema URLs): the
 * shape without them. 64-bit integers compared as the decimal strings the OTLP/JSON spec writes
 * (receivers take a number or a string; the SDK sends numbers, we send strings).
 */
export function withoutDefaults(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutDefaults);
  if (typeof value !== "object" || value === null) return value;
  const kept = Object.entries(value).filter(
    ([key, field]) =>
      !(/^dropped.*Count$/.test(key) && field === 0) &&
      !(key === "links" && Array.isArray(field) && field.length === 0) &&
      key !== "flags" &&
      key !== "schemaUrl",
  );
  return Object.fromEntries(kept.map(([key, field]) => [key, key === "intValue" ? String(field) : withoutDefaults(field)]));
}
