import type { OAuthDiscoveryState } from "@modelcontextprotocol/client";
import { downstreamIssuerKey } from "../../storage-keys";
import { ClientIssuerMismatchError, TokenEndpointOriginError } from "./connection-errors";

/**
 * A pre-registered client (auth.client_id_secret, with its secret) belongs to the authorization
 * server it was registered at. Which authorization server the MCP SDK talks to is chosen by the
 * MCP server's protected-resource metadata (RFC 9728), which the MCP server (or whoever serves
 * its /.well-known) controls; so the client is pinned to one issuer: the catalog's auth.issuer,
 * or else the first issuer it is used with, stored in OAUTH_KV and never overwritten. Another
 * issuer, or a token endpoint outside the issuer's origin that the catalog does not name
 * (auth.token_endpoint), is refused before anything is sent.
 */
export interface IssuerPin {
  issuer: string;
  /** Named by the catalog (auth.issuer), rather than pinned on first use. */
  configured: boolean;
}

/** What of a connection target the pin reads (a ConnectionTarget). */
export interface PinnedTarget {
  serverId: string;
  url: string;
  issuer?: string;
  tokenEndpoint?: string;
}

interface StoredPin {
  issuer: string;
  pinnedAt: number;
}

/** The issuer `clientId` is pinned to at `target`'s server, or undefined before its first use. */
export async function readIssuerPin(env: Env, target: PinnedTarget, clientId: string): Promise<IssuerPin | undefined> {
  if (target.issuer !== undefined) return { issuer: target.issuer, configured: true };
  const stored = await env.OAUTH_KV.get<StoredPin>(await downstreamIssuerKey(target.url, clientId), "json");
  return typeof stored?.issuer === "string" ? { issuer: stored.issuer, configured: false } : undefined;
}

/**
 * Pins `clientId` at `target`'s server to `issuer` unless it is pinned already (first use wins),
 * and answers the pin in force.
 */
export async function pinIssuer(env: Env, target: PinnedTarget, clientId: string, issuer: string): Promise<IssuerPin> {
  const existing = await readIssuerPin(env, target, clientId);
  if (existing !== undefined) return existing;
  const pin: StoredPin = { issuer, pinnedAt: Date.now() };
  await env.OAUTH_KV.put(await downstreamIssuerKey(target.url, clientId), JSON.stringify(pin));
  return { issuer, configured: false };
}

/**
 * Throws unless `seen` (the issuer the SDK resolved through discovery) is the pinned one, and the
 * token endpoint its metadata names is on the issuer's origin or is the catalog's
 * auth.token_endpoint. Runs before the SDK builds any request that carries the client's id or
 * secret.
 */
export function assertPinnedIssuer(target: PinnedTarget, pin: IssuerPin, seen: string, discovery: OAuthDiscoveryState | undefined): void {
  if (!issuersMatch(pin.issuer, seen)) throw new ClientIssuerMismatchError(target.serverId, pin.issuer, seen, pin.configured);
  const tokenEndpoint = discovery?.authorizationServerMetadata?.token_endpoint;
  // Without metadata the SDK posts to /token at the authorization server's own URL.
  if (tokenEndpoint === undefined) return;
  if (sameOrigin(tokenEndpoint, seen)) return;
  if (target.tokenEndpoint !== undefined && sameUrl(tokenEndpoint, target.tokenEndpoint)) return;
  throw new TokenEndpointOriginError(target.serverId, seen, tokenEndpoint);
}

/**
 * RFC 8414 issuer identity, as the SDK compares issuers (SEP-2352): equal strings, tolerating one
 * trailing slash (a URL the SDK derives is always slash-suffixed).
 */
export function issuersMatch(a: string, b: string): boolean {
  return a === b || (a.endsWith("/") && a.slice(0, -1) === b) || (b.endsWith("/") && b.slice(0, -1) === a);
}

function sameOrigin(a: string, b: string): boolean {
  try {
    return new URL(a).origin === new URL(b).origin;
  } catch {
    return false;
  }
}

function sameUrl(a: string, b: string): boolean {
  try {
    return new URL(a).href === new URL(b).href;
  } catch {
    return false;
  }
}
