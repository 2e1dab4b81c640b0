import type { ClientInfo } from "@cloudflare/workers-oauth-provider";
import { z } from "zod";
import { judgeRedirectUri } from "../redirect-uri-policy";

/**
 * Client ID Metadata Documents (CIMD, MCP 2025-11-25 and 2026-07-28): a client names itself by
 * an https URL whose document lists its redirect URIs. The provider's own CIMD support fetches
 * with the global fetch and so needs the `global_fetch_strictly_public` flag, which would stop
 * local development from reaching loopback downstream servers. Ours fetches through the Worker's
 * guarded outbound fetch instead (handed in by src/index.ts: public addresses only, loopback only
 * in local development, every redirect re-checked) and registers the validated document in
 * OAUTH_KV under `client:<url>`, where the provider (CIMD off) looks every client up. So the
 * provider's own checks (exact redirect_uri match, PKCE) apply to it as to a registered client.
 */
export type ClientMetadataFetch = (url: string, init: RequestInit) => Promise<Response>;

/** The draft's bound for a document (5 KB), and a fetch well under a person's patience. */
export const CIMD_MAX_BYTES = 5 * 1024;
export const CIMD_TIMEOUT_MS = 5_000;
/** Cached by the document's Cache-Control, between KV's minimum and a day; 5 minutes without one. */
const MIN_TTL_S = 60;
const MAX_TTL_S = 24 * 3600;
const DEFAULT_TTL_S = 300;

const documentSchema = z.looseObject({
  client_id: z.string(),
  redirect_uris: z.array(z.string().min(1).max(2000)).min(1).max(20),
  client_name: z.string().max(200).optional(),
  token_endpoint_auth_method: z.literal("none").optional(),
  grant_types: z.array(z.enum(["authorization_code", "refresh_token"])).optional(),
  response_types: z.array(z.literal("code")).optional(),
});

/** Top-level names reserved never to resolve (RFC 2606, RFC 6761): no document can live there, so none is fetched. */
const RESERVED_TLDS = /\.(example|invalid|test)\.?$/i;

/** Whether a client id is a CIMD URL (https with a path), the shape a client that uses one sends. */
export function isMetadataDocumentUrl(clientId: string): boolean {
  if (!/^https:\/\//i.test(clientId)) return false;
  try {
    const url = new URL(clientId);
    if (RESERVED_TLDS.test(url.hostname)) return false;
    return url.pathname !== "/" && url.hash === "" && url.username === "" && url.password === "" && !/(^|\/)\.\.?(\/|$)/.test(url.pathname);
  } catch {
    return false;
  }
}

/**
 * Makes sure OAUTH_KV holds the client a CIMD URL names: a registration still cached is kept;
 * otherwise the document is fetched, validated and stored for its cache lifetime. Returns why
 * the document cannot be used (for the log; the client sees the unknown client's answer), or
 * undefined once the client is registered.
 */
export async function ensureMetadataDocumentClient(
  kv: KVNamespace,
  clientId: string,
  fetchDocument: ClientMetadataFetch,
  now: number,
): Promise<string | undefined> {
  const key = `client:${clientId}`;
  if ((await kv.get(key)) !== null) return undefined;
  const fetched = await fetchBounded(clientId, fetchDocument);
  if (typeof fetched === "string") return fetched;
  const parsed = documentSchema.safeParse(fetched.json);
  if (!parsed.success)
    return `the document is not client metadata (${parsed.error.issues[0]?.path.join(".") ?? "?"}: ${parsed.error.issues[0]?.message ?? "?"})`;
  // The draft: the document names itself exactly, or anyone could serve another client's.
  if (parsed.data.client_id !== clientId) return "the document's client_id is not its own URL";
  for (const uri of parsed.data.redirect_uris) {
    const verdict = judgeRedirectUri(uri);
    if (!verdict.ok) return `redirect URI refused: ${verdict.reason}`;
  }
  const client: ClientInfo = {
    clientId,
    redirectUris: parsed.data.redirect_uris,
    ...(parsed.data.client_name === undefined ? {} : { clientName: parsed.data.client_name }),
    tokenEndpointAuthMethod: "none",
    grantTypes: parsed.data.grant_types ?? ["authorization_code", "refresh_token"],
    responseTypes: ["code"],
    registrationDate: Math.floor(now / 1000),
  };
  await kv.put(key, JSON.stringify(client), { expirationTtl: fetched.ttlSeconds });
  return undefined;
}

async function fetchBounded(url: string, fetchDocument: ClientMetadataFetch): Promise<{ json: unknown; ttlSeconds: number } | string> {
  const signal = AbortSignal.timeout(CIMD_TIMEOUT_MS);
  let response: Response;
  try {
    response = await fetchDocument(url, { headers: { Accept: "application/json" }, signal, redirect: "manual" });
  } catch (error) {
    return `the document could not be fetched (${error instanceof Error ? error.message.slice(0, 200) : "failed"})`;
  }
  if (response.status !== 200) return `the document answered HTTP ${response.status}`;
  const declared = Number(response.headers.get("content-length") ?? "0");
  if (declared > CIMD_MAX_BYTES) return `the document is over ${CIMD_MAX_BYTES} bytes`;
  const reader = response.body?.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = reader ? await reader.read() : { done: true, value: undefined };
      if (done) break;
      size += value.byteLength;
      if (size > CIMD_MAX_BYTES) {
        await reader?.cancel();
        return `the document is over ${CIMD_MAX_BYTES} bytes`;
      }
      chunks.push(value);
    }
  } catch {
    return "the document could not be read in time";
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  try {
    return { json: JSON.parse(new TextDecoder().decode(bytes)), ttlSeconds: cacheTtl(response.headers.get("cache-control")) };
  } catch {
    return "the document is not JSON";
  }
}

function cacheTtl(cacheControl: string | null): number {
  if (cacheControl === null) return DEFAULT_TTL_S;
  if (/(?:^|,)\s*(?:no-cache|no-store)\b/i.test(cacheControl)) return MIN_TTL_S;
  const maxAge = /(?:^|,)\s*max-age\s*=\s*"?(\d+)/i.exec(cacheControl)?.[1];
  return maxAge === undefined ? DEFAULT_TTL_S : Math.min(MAX_TTL_S, Math.max(MIN_TTL_S, Number(maxAge)));
}
