import { truncateUtf8 } from "./result-truncation";

/** What scrubs a text a run record keeps (trace-redactor.ts makes one per run). */
export type Redact = (text: string) => string;

/** Bounds of what a run record keeps of each text (UTF-8 bytes). */
export const TRACE_BOUNDS = {
  arguments: 4_096,
  toolArguments: 2_048,
  toolResult: 1_024,
  answer: 2_048,
  stepText: 4_096,
} as const;

/**
 * Raw text kept while the run goes on: enough past the bound that a secret which starts inside
 * the bound is still whole when it is redacted at the end (then the excerpt is cut).
 */
const REDACTION_MARGIN_CHARS = 1_024;

export function rawPreview(text: string, maxBytes: number): string {
  return text.length > maxBytes + REDACTION_MARGIN_CHARS ? text.slice(0, maxBytes + REDACTION_MARGIN_CHARS) : text;
}

/** Redacted first, then cut, so no cut can leave half a secret unrecognised. */
export function excerpt(text: string, redact: Redact, maxBytes: number): string {
  return truncateUtf8(redact(rawPreview(text, maxBytes)), maxBytes).text;
}

/** JSON of a value as a bounded, redacted excerpt. */
export function jsonExcerpt(value: unknown, redact: Redact, maxBytes: number): string {
  let json: string;
  try {
    json = JSON.stringify(value) ?? "null";
  } catch {
    json = '"[not serialisable]"';
  }
  return excerpt(json, redact, maxBytes);
}
