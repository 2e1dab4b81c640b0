import { describe, expect, it } from "vitest";
import type { OtelConfig } from "../../../src/experts/telemetry/otel-config";
import { otelConfig, parseOtlpHeaders, sampled } from "../../../src/experts/telemetry/otel-config";
import { jsonSpan, SpanKind, type ExportTraceRequest, type JsonSpan } from "../../../src/experts/telemetry/otlp-json";
import { SpanExporter } from "../../../src/experts/telemetry/span-exporter";

const config: OtelConfig = { tracesUrl: "http://127.0.0.1:9/v1/traces", headers: { "x-honeycomb-team": "hc-key-1" }, ratio: 1 };

function spans(count: number): JsonSpan[] {
  return Array.from({ length: count }, (_, index) =>
    jsonSpan({
      traceId: "4bf92f3577b34da6a3ce929d0e0e4736",
      spanId: `${index}`.padStart(16, "a"),
      name: `s${index}`,
      kind: SpanKind.internal,
      startMs: 1,
      endMs: 2,
      attributes: {},
    }),
  );
}

interface Sent {
  url: string;
  headers: Headers;
  body: ExportTraceRequest;
}

/** A collector answering with `statuses` in turn (the last repeats); "hang" never answers until the request's signal aborts. */
function collector(statuses: Array<number | "hang">) {
  const sent: Sent[] = [];
  let index = 0;
  const fetch = async (url: string, init: RequestInit): Promise<Response> => {
    sent.push({ url, headers: new Headers(init.headers), body: JSON.parse(String(init.body)) as ExportTraceRequest });
    const status = statuses[Math.min(index++, statuses.length - 1)];
    if (status === "hang") return new Promise((_resolve, reject) => init.signal?.addEventListener("abort", () => reject(init.signal?.reason), { once: true }));
    return new Response("{}", { status });
  };
  return { sent, fetch };
}

const noWait = async () => undefined;

describe("the span exporter", () => {
  it("sends batches to the collector with its headers, as OTLP/JSON", async () => {
    const { sent, fetch } = collector([200]);
    const exporter = new SpanExporter(config, { "service.name": "slipsnisse" }, { fetch, maxBatch: 2, sleep: noWait });
    await exporter.enqueue(spans(5));
    expect(sent.map((request) => request.body.resourceSpans[0]?.scopeSpans[0]?.spans.length)).toEqual([2, 2, 1]);
    expect(sent[0]?.url).toBe(config.tracesUrl);
    expect(sent[0]?.headers.get("x-honeycomb-team")).toBe("hc-key-1");
    expect(sent[0]?.headers.get("content-type")).toBe("application/json");
    expect(exporter.totals()).toEqual({ sent: 5, dropped: 0, queued: 0 });
  });

  it("retries a 503 with backoff, gives up on a 500 at once and counts what it dropped", async () => {
    const waits: number[] = [];
    const sleep = async (ms: number) => void waits.push(ms);
    const retried = collector([503, 503, 200]);
    const ok = new SpanExporter(config, {}, { fetch: retried.fetch, sleep, backoffMs: 100 });
    await ok.enqueue(spans(3));
    expect(retried.sent).toHaveLength(3);
    expect(waits).toEqual([100, 200]);
    expect(ok.totals()).toEqual({ sent: 3, dropped: 0, queued: 0 });

    const failing = collector([500]);
    const dead = new SpanExporter(config, {}, { fetch: failing.fetch, sleep });
    await dead.enqueue(spans(4));
    expect(failing.sent).toHaveLength(1);
    expect(dead.totals()).toEqual({ sent: 0, dropped: 4, queued: 0 });
  });

  it("bounds a hanging collector by the timeout per attempt, and the queue by its size", async () => {
    const hanging = collector(["hang"]);
    const exporter = new SpanExporter(config, {}, { fetch: hanging.fetch, sleep: noWait, timeoutMs: 50, attempts: 2, maxQueue: 10, maxBatch: 10 });
    const started = performance.now();
    const flush = exporter.enqueue(spans(8));
    // While the first batch hangs, more arrive than the queue holds: the excess is dropped at once.
    void exporter.enqueue(spans(8));
    void exporter.enqueue(spans(8));
    expect(exporter.totals()).toMatchObject({ dropped: 6, queued: 10 });
    await flush;
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(hanging.sent).toHaveLength(4); // two batches, two attempts each
    expect(exporter.totals()).toEqual({ sent: 0, dropped: 6 + 8 + 10, queued: 0 });
  });

  it("never rejects, also when fetch throws", async () => {
    const exporter = new SpanExporter(config, {}, { fetch: async () => Promise.reject(new TypeError("connection refused")), sleep: noWait });
    await expect(exporter.enqueue(spans(1))).resolves.toBeUndefined();
    expect(exporter.totals().dropped).toBe(1);
  });
});

describe("the tenant's export settings", () => {
  const env = (vars: Record<string, string>) => vars as unknown as Env;

  it("is off without an http(s) endpoint, and appends /v1/traces to the base", () => {
    expect(otelConfig(env({}))).toBeUndefined();
    expect(otelConfig(env({ OTEL_EXPORTER_OTLP_ENDPOINT: "" }))).toBeUndefined();
    expect(otelConfig(env({ OTEL_EXPORTER_OTLP_ENDPOINT: "ftp://collector" }))).toBeUndefined();
    expect(otelConfig(env({ OTEL_EXPORTER_OTLP_ENDPOINT: "not a url" }))).toBeUndefined();
    expect(otelConfig(env({ OTEL_EXPORTER_OTLP_ENDPOINT: "https://api.honeycomb.io" }))).toEqual({
      tracesUrl: "https://api.honeycomb.io/v1/traces",
      headers: {},
      ratio: 1,
    });
    expect(otelConfig(env({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318/otlp/", OTEL_TRACES_SAMPLER_ARG: "0.25" }))).toMatchObject({
      tracesUrl: "http://127.0.0.1:4318/otlp/v1/traces",
      ratio: 0.25,
    });
  });

  it("reads headers as the OpenTelemetry spec writes them, skipping what it cannot send", () => {
    expect(parseOtlpHeaders("x-honeycomb-team=abc%3D%3D, Authorization=Basic%20dXNlcjpwdw==,bad name=1,=x,novalue,crlf=a%0d%0ab")).toEqual({
      "x-honeycomb-team": "abc==",
      authorization: "Basic dXNlcjpwdw==",
    });
  });

  it("samples by the caller's flag first, then the trace id against the ratio", () => {
    const ids = Array.from({ length: 2000 }, () => crypto.randomUUID().replaceAll("-", ""));
    expect(ids.every((id) => sampled(id, 1, undefined))).toBe(true);
    expect(ids.some((id) => sampled(id, 1, false))).toBe(false);
    expect(ids.some((id) => sampled(id, 0, true))).toBe(false);
    const share = ids.filter((id) => sampled(id, 0.25, true)).length / ids.length;
    expect(share).toBeGreaterThan(0.15);
    expect(share).toBeLessThan(0.35);
  });
});
