import type { ClientCapabilities } from "@modelcontextprotocol/server";
import { APP_MIME_TYPE, declaresUi, formElicitation, UI_EXTENSION, urlElicitation } from "./declared-capabilities";

/*
 * The `Mcp-Session-Id` this server mints (the clientSessionId). createMcpHandler serves every
 * 2025 Streamable HTTP POST on a fresh server that saw no `initialize`, so what a client declared
 * there (elicitation, MCP Apps) would be lost after its first request. The id carries it: the
 * `initialize` answer of a client that declared any of it gets an id naming what it declared,
 * and the client sends it back on every request (docs/platform-notes.md#elicitation). The id
 * holds no secret and grants nothing: it only says what the client can take, and a client that
 * forges one only changes what it is sent.
 */

/** A random id, then what the client declared (f: form, u: url elicitation, a: MCP Apps). */
const MINTED_ID = /^[0-9a-f-]{36}\.(f?u?a?)$/;

/** The clientSessionId for an `initialize` whose client declared elicitation or MCP Apps; undefined when it declared neither. */
export function mintClientSessionId(capabilities: unknown): string | undefined {
  const flags = `${formElicitation(capabilities) ? "f" : ""}${urlElicitation(capabilities) ? "u" : ""}${declaresUi(capabilities) ? "a" : ""}`;
  return flags === "" ? undefined : `${crypto.randomUUID()}.${flags}`;
}

/** What a clientSessionId minted here says the client declared; undefined for any other id (or none). */
export function declaredBy(clientSessionId: string | undefined): ClientCapabilities | undefined {
  const flags = clientSessionId === undefined ? undefined : MINTED_ID.exec(clientSessionId)?.[1];
  if (!flags) return undefined;
  const elicitation = flags.includes("f") || flags.includes("u");
  return {
    ...(elicitation ? { elicitation: { ...(flags.includes("f") ? { form: {} } : {}), ...(flags.includes("u") ? { url: {} } : {}) } } : {}),
    ...(flags.includes("a") ? { extensions: { [UI_EXTENSION]: { mimeTypes: [APP_MIME_TYPE] } } } : {}),
  };
}
