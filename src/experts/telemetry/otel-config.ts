import { readSecret } from "../../env";

/** Where and how much a deployment exports; read from its vars and secrets (docs/operating.md). */
export interface OtelConfig {
  /** The OTLP/HTTP traces URL: `<OTEL_EXPORTER_OTLP_ENDPOINT>/v1/traces`. */
  tracesUrl: string;
  /** From the secret OTEL_EXPORTER_OTLP_HEADERS: sent to the collector, never logged. */
  headers: Readonly<Record<string, string>>;
  /** OTEL_TRACES_SAMPLER_ARG: the share of traces exported, 0 to 1 (default 1). */
  ratio: number;
}

/**
 * The tenant's export settings, or undefined (off, the default) while OTEL_EXPORTER_OTLP_ENDPOINT
 * is empty or not an http(s) URL. The variable names and formats are the OpenTelemetry SDK's own
 * (its environment variable specification), so a backend's setup instructions apply as written.
 */
export function otelConfig(env: Env): OtelConfig | undefined {
  const base = readSecret(env, "OTEL_EXPORTER_OTLP_ENDPOINT");
  if (base === undefined) return undefined;
  let url: URL;
  try {
    url = new URL(base);
  } catch {
    return undefined;
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return undefined;
  // The spec: the signal's path is appended to the base endpoint, after any path it has.
  url.pathname = `${url.pathname.replace(/\/+$/, "")}/v1/traces`;
  return {
    tracesUrl: url.toString(),
    headers: parseOtlpHeaders(readSecret(env, "OTEL_EXPORTER_OTLP_HEADERS")),
    ratio: samplerRatio(readSecret(env, "OTEL_TRACES_SAMPLER_ARG")),
  };
}

/**
 * `key1=value1,key2=value2` with percent-encoded values (the W3C Baggage list format the
 * OpenTelemetry spec names). A member that is not `key=value` with a header-safe name, or whose
 * value does not decode, is skipped: a header we cannot send as given is better left out than mangled.
 */
export function parseOtlpHeaders(raw: string | undefined): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const member of (raw ?? "").split(",")) {
    const at = member.indexOf("=");
    if (at <= 0) continue;
    const name = member.slice(0, at).trim().toLowerCase();
    if (!/^[!#$%&'*+.^_`|~0-9a-z-]+$/.test(name)) continue;
    try {
      const value = decodeURIComponent(member.slice(at + 1).trim());
      if (!/[\r\n\0]/.test(value)) headers[name] = value;
    } catch {
      // not percent-decodable: skipped
    }
  }
  return headers;
}

function samplerRatio(raw: string | undefined): number {
  if (raw === undefined) return 1;
  const ratio = Number(raw);
  return Number.isFinite(ratio) ? Math.min(1, Math.max(0, ratio)) : 1;
}

const RATIO_BITS = 2n ** 56n;

/**
 * Whether a trace is exported: never when the caller's span was not sampled (parent-based, as
 * the OpenTelemetry default sampler), otherwise by its trace id against the ratio (TraceIdRatioBased:
 * the id's lowest 56 bits, so every service sampling the same trace at the same ratio agrees).
 */
export function sampled(traceId: string, ratio: number, callerSampled: boolean | undefined): boolean {
  if (callerSampled === false || ratio <= 0) return false;
  if (ratio >= 1) return true;
  const low = BigInt(`0x${traceId.slice(-14)}`);
  return low < BigInt(Math.floor(ratio * Number(RATIO_BITS)));
}
