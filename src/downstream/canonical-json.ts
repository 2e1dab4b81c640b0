/**
 * JSON with object keys sorted and undefined members dropped, so two documents that differ only
 * in key order (or in `undefined` members JSON would drop anyway) serialise, and hash, alike.
 * Array order is kept: it can carry meaning.
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(canonical(value));
}

function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([, item]) => item !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([key, item]) => [key, canonical(item)]),
  );
}

/** Lowercase hex SHA-256 of a string's UTF-8 bytes (crypto.subtle: the same in workerd and Node). */
export async function sha256Hex(text: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)));
  return [...digest].map((byte) => byte.toString(16).padStart(2, "0")).join("");
}
