import type { DownstreamServerConfig } from "../catalog/catalog-schema";

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

/**
 * A short stable hash of a server's configuration (key order does not matter). Headers are
 * hashed as configured, `${NAME}` templates and all, so no secret value feeds the hash.
 */
export async function serverConfigHash(config: DownstreamServerConfig): Promise<string> {
  const bytes = new TextEncoder().encode(JSON.stringify(canonical(config)));
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return [...digest.slice(0, 12)].map((byte) => byte.toString(16).padStart(2, "0")).join("");
}
