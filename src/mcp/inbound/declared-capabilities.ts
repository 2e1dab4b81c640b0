/*
 * What a client's declared capabilities say, read from whichever place declared them (an
 * `initialize`, a clientSessionId minted here, a 2026-07-28 request's envelope). The values are
 * the client's word and untrusted: each reader accepts exactly the shape it needs and answers
 * false for anything else.
 */

/** The MCP Apps extension's id in `capabilities.extensions` (ext-apps' EXTENSION_ID; test/mcp/server/run-app.test.ts checks it). */
export const UI_EXTENSION = "io.modelcontextprotocol/ui";
/** The MIME type of an MCP App's HTML (ext-apps' RESOURCE_MIME_TYPE). */
export const APP_MIME_TYPE = "text/html;profile=mcp-app";

function objectAt(value: unknown, key: string): Record<string, unknown> | undefined {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
  const inner: unknown = Reflect.get(value, key);
  return typeof inner === "object" && inner !== null && !Array.isArray(inner) ? (inner as Record<string, unknown>) : undefined;
}

/** Form mode: `elicitation: {}` (2025-06-18) or `elicitation: { form: {} }` (2025-11-25 and later). */
export function formElicitation(capabilities: unknown): boolean {
  const elicitation = objectAt(capabilities, "elicitation");
  return elicitation !== undefined && (Object.keys(elicitation).length === 0 || "form" in elicitation);
}

/** URL mode (2025-11-25, SEP-1036): `elicitation: { url: {} }`. */
export function urlElicitation(capabilities: unknown): boolean {
  const elicitation = objectAt(capabilities, "elicitation");
  return elicitation !== undefined && "url" in elicitation;
}

/**
 * MCP Apps with our MIME type (ext-apps' getUiCapability, and its rule that `mimeTypes` must
 * name `text/html;profile=mcp-app`; a client that lists no types is taken at its word).
 */
export function declaresUi(capabilities: unknown): boolean {
  const ui = objectAt(objectAt(capabilities, "extensions"), UI_EXTENSION);
  if (ui === undefined) return false;
  const types: unknown = ui.mimeTypes;
  if (types === undefined) return true;
  return Array.isArray(types) && types.every((type) => typeof type === "string") && types.includes(APP_MIME_TYPE);
}
