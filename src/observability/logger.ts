/**
 * Structured logs (one JSON object a line, which Workers Logs indexes). Fields whose names
 * suggest a credential are replaced, and so are bearer tokens inside strings: a log line must
 * never carry the inbound OAuth token or a resolved downstream secret.
 */
export type LogLevel = "debug" | "info" | "warn" | "error";

const SECRET_KEY = /authorization|token|secret|password|api[-_]?key|cookie|credential/i;
const BEARER = /\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{8,}/g;

export function redact(value: unknown, depth = 0): unknown {
  if (typeof value === "string") return value.replace(BEARER, "$1 [redacted]");
  if (depth > 6 || value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return value.map((item) => redact(item, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    out[key] = SECRET_KEY.test(key) ? "[redacted]" : redact(item, depth + 1);
  }
  return out;
}

export function log(level: LogLevel, message: string, fields: Record<string, unknown> = {}): void {
  const line = JSON.stringify({ level, message, ...(redact(fields) as Record<string, unknown>) });
  if (level === "error") console.error(line);
  else if (level === "warn") console.warn(line);
  else console.log(line);
}
