import { readSecret } from "../env";
import { MissingSecretError } from "./downstream-errors";

/** `${NAME}` with NAME in the catalog's SECRET_NAME_PATTERN alphabet. */
const SECRET_REFERENCE = /\$\{([A-Z][A-Z0-9_]*)\}/g;

export interface ResolvedHeaders {
  headers: Record<string, string>;
  /** The substituted secret values, so text from the server can be scrubbed of them. */
  secretValues: string[];
}

/**
 * Replace every `${NAME}` in the configured header values with the Worker secret NAME. The
 * result lives only in the connection's memory: it is never stored, cached or logged.
 * Throws MissingSecretError (naming the server and the secret, never a value).
 */
export function resolveSecretHeaders(serverId: string, configured: Readonly<Record<string, string>>, env: Env): ResolvedHeaders {
  const headers: Record<string, string> = {};
  const secretValues = new Set<string>();
  for (const [name, template] of Object.entries(configured)) {
    headers[name] = template.replace(SECRET_REFERENCE, (_match, secretName: string) => {
      const value = readSecret(env, secretName);
      if (value === undefined) throw new MissingSecretError(serverId, secretName);
      secretValues.add(value);
      return value;
    });
  }
  return { headers, secretValues: [...secretValues] };
}

/** The secret names a header set references (for config checks that must not read values). */
export function referencedSecretNames(configured: Readonly<Record<string, string>>): string[] {
  const names = new Set<string>();
  for (const template of Object.values(configured)) {
    for (const match of template.matchAll(SECRET_REFERENCE)) if (match[1] !== undefined) names.add(match[1]);
  }
  return [...names];
}

/** Scrub secret values (and whole header values that contain one) out of text from downstream. */
export function redactSecretValues(text: string, secretValues: readonly string[]): string {
  let out = text;
  // Longest first, so a secret that contains another is replaced whole.
  for (const value of longestFirst(secretValues)) {
    if (value.length > 0 && out.includes(value)) out = out.split(value).join("[redacted]");
  }
  return out;
}

/** A redactor's secret list is fixed for its life and it scrubs every text of a run: sorted once. */
const sortedLists = new WeakMap<readonly string[], readonly string[]>();

function longestFirst(values: readonly string[]): readonly string[] {
  if (values.length < 2) return values;
  let sorted = sortedLists.get(values);
  if (!sorted) {
    sorted = [...values].sort((a, b) => b.length - a.length);
    sortedLists.set(values, sorted);
  }
  return sorted;
}

/**
 * redactSecretValues over every string inside a JSON-like value (a tool result, a tool list about
 * to be cached, a run's messages), keys included. Copy on write: an array or object is rebuilt
 * only when something inside it changed, so the usual value, with no secret in it, comes back
 * as it was given instead of as a copy of every node (a copy per tool call and per stored turn).
 */
export function redactDeep<T>(value: T, redact: (text: string) => string, depth = 0): T {
  if (typeof value === "string") return redact(value) as T;
  if (depth > 32 || value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined;
    for (let index = 0; index < value.length; index++) {
      const item: unknown = value[index];
      const redacted = redactDeep(item, redact, depth + 1);
      if (redacted !== item) copy ??= value.slice();
      if (copy) copy[index] = redacted;
    }
    return (copy ?? value) as T;
  }
  const entries = Object.entries(value);
  let changed = false;
  const redacted = entries.map(([key, item]): [string, unknown] => {
    const [newKey, newItem] = [redact(key), redactDeep(item, redact, depth + 1)];
    if (newKey !== key || newItem !== item) changed = true;
    return [newKey, newItem];
  });
  return changed ? (Object.fromEntries(redacted) as T) : value;
}
