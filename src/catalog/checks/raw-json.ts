/** Type guards for walking a catalog document before zod has accepted it. */
export type RawObject = Record<string, unknown>;

export function isRawObject(value: unknown): value is RawObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export function objectEntries(value: unknown): [string, unknown][] {
  return isRawObject(value) ? Object.entries(value) : [];
}

export function arrayItems(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

export function stringAt(value: unknown, key: string): string | undefined {
  if (!isRawObject(value)) return undefined;
  const field = value[key];
  return typeof field === "string" ? field : undefined;
}
