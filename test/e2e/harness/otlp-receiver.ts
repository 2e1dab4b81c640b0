import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** One OTLP/HTTP export as the receiver got it: its headers and its body, parsed as OTLP/JSON. */
export interface ReceivedExport {
  headers: IncomingMessage["headers"];
  body: OtlpTraceRequest;
}

/** The OTLP/JSON `ExportTraceServiceRequest` fields the tests read. */
export interface OtlpTraceRequest {
  resourceSpans: Array<{
    resource?: { attributes?: OtlpKeyValue[] };
    scopeSpans: Array<{ scope?: { name: string; version?: string }; spans: OtlpSpan[] }>;
  }>;
}
export interface OtlpKeyValue {
  key: string;
  value: { stringValue?: string; intValue?: string | number; doubleValue?: number; boolValue?: boolean; arrayValue?: { values: OtlpKeyValue["value"][] } };
}
export interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  traceState?: string;
  name: string;
  kind: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes?: OtlpKeyValue[];
  events?: Array<{ timeUnixNano: string; name: string; attributes?: OtlpKeyValue[] }>;
  status?: { code?: number; message?: string };
}

/** How the receiver answers: a collector that works, fails or never answers. */
export type ReceiverMode = "ok" | 500 | "hang";

export interface OtlpReceiver {
  /** The base URL to set as OTEL_EXPORTER_OTLP_ENDPOINT (the exporter appends /v1/traces). */
  endpoint: string;
  exports: ReceivedExport[];
  /** Every span received, in arrival order. */
  spans(): OtlpSpan[];
  /** Requests that arrived while the mode was "hang" (still unanswered). */
  hanging(): number;
  setMode(mode: ReceiverMode): void;
  close(): Promise<void>;
}

/** An OTLP/HTTP JSON trace receiver on 127.0.0.1: what a collector would get, kept for the test. */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const exports: ReceivedExport[] = [];
  const held: ServerResponse[] = [];
  let mode: ReceiverMode = "ok";
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      if (req.method !== "POST" || req.url !== "/v1/traces" || req.headers["content-type"] !== "application/json") {
        res.writeHead(400).end();
        return;
      }
      exports.push({ headers: req.headers, body: JSON.parse(Buffer.concat(chunks).toString("utf8")) as OtlpTraceRequest });
      if (mode === "hang") held.push(res);
      else if (mode === 500) res.writeHead(500).end("collector down");
      else res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    exports,
    spans: () => exports.flatMap((received) => received.body.resourceSpans.flatMap((resource) => resource.scopeSpans.flatMap((scope) => scope.spans))),
    hanging: () => held.filter((res) => !res.writableEnded).length,
    setMode: (next) => {
      mode = next;
    },
    close: async () => {
      for (const res of held) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** An attribute's value as a plain JS value (strings, numbers, booleans, arrays of them). */
export function attributeOf(attributes: OtlpKeyValue[] | undefined, key: string): unknown {
  const value = attributes?.find((entry) => entry.key === key)?.value;
  if (value === undefined) return undefined;
  if (value.arrayValue) return value.arrayValue.values.map((item) => item.stringValue ?? item.intValue ?? item.doubleValue ?? item.boolValue);
  if (value.intValue !== undefined) return Number(value.intValue);
  return value.stringValue ?? value.doubleValue ?? value.boolValue;
}
