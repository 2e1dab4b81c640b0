import { auth, type OAuthDiscoveryState } from "@modelcontextprotocol/client";
import { DurableObject } from "cloudflare:workers";
import { randomToken } from "../../auth/pkce";
import { log } from "../../observability/logger";
import { oauthFetch, scrubFor } from "./client-secret-forms";
import { ConnectionOAuthProvider } from "./connection-oauth-provider";
import {
  applyConnectionSchema,
  type ConnectFlowView,
  type ConnectionRow,
  connectionSummary,
  type ConnectionSummary,
  type FlowRow,
  storedClientSchema,
  type StoredClient,
  storedTokensSchema,
  type StoredTokens,
} from "./connection-schema";
import { serverKey, type ConnectionTarget } from "./connection-target";
import { describeSetupFailure, missingMetadata } from "./setup-failure";
import { TokenCipher } from "./token-cipher";
import { TokenHolders } from "./token-holders";

/** How long a connect link works. */
const FLOW_TTL_MS = 15 * 60_000;
/** A token this close to its expiry is refreshed before use. */
const REFRESH_AHEAD_MS = 60_000;
/** `connected_by` of a token Slipsnisse fetched itself with the client-credentials grant. */
export const CLIENT_CREDENTIALS_ACTOR = "client credentials";

export type TokenAnswer = { token: string; expiresAt: number | null } | { missing: string };
export type StartAnswer = { flowId: string } | { failed: string };
export type FinishAnswer = { serverId: string; skill: string; serverKey: string } | { refused: string };

/**
 * One member's connections to downstream servers that sign each user in with their own OAuth
 * (or, named `<tenant>:team`, the team's). Per member rather than per ExpertSession (which is per
 * skill and member) so one sign-in serves the member's sessions of every skill, and so a refresh
 * with a rotating refresh token happens in one place, one at a time. Tokens are sealed with
 * AES-GCM (token-cipher.ts) before they are written; they leave the object only as the answer to
 * `accessToken`, to the member's own ExpertSession, which sends them only to the server's URL.
 */
export class UserConnections extends DurableObject<Env> {
  private readonly sql: SqlStorage;
  private cipher: Promise<TokenCipher> | undefined;
  /** One refresh per server at a time: concurrent callers share it (rotation makes a second one fail). */
  private readonly refreshing = new Map<string, Promise<TokenAnswer>>();
  /** The sessions that may still hold a token handed out here: a removal tells them (token-holders.ts). */
  private readonly holders: TokenHolders;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    applyConnectionSchema(this.sql);
    this.holders = new TokenHolders(this.sql, env.EXPERT_SESSION);
  }

  async list(): Promise<ConnectionSummary[]> {
    return this.sql.exec<ConnectionRow>(`SELECT * FROM connections ORDER BY connected_at DESC`).toArray().map(connectionSummary);
  }

  async status(url: string): Promise<ConnectionSummary | null> {
    const row = this.row(serverKey(url));
    return row ? connectionSummary(row) : null;
  }

  /**
   * Starts a sign-in to `target`: discovery, registration and PKCE happen now (so metadata that
   * is missing or malformed is reported to the run that asked, naming the server), and the
   * authorization URL waits in the flow for the member's browser.
   */
  async startFlow(target: ConnectionTarget, redirectUrl: string, requestedBy: string): Promise<StartAnswer> {
    if (target.grant === "client_credentials") {
      // No one signs in: the token comes from the client's credentials; say why it did not.
      const answer = await this.accessToken(target);
      return { failed: "missing" in answer ? answer.missing : "it uses the client-credentials grant, which needs no sign-in: call again" };
    }
    const now = Date.now();
    this.sql.exec(`DELETE FROM connect_flows WHERE expires_at < ?`, now - FLOW_TTL_MS);
    const key = serverKey(target.url);
    const provider = new ConnectionOAuthProvider(this.env, await this.seal(), { target, redirectUrl, state: randomToken() });
    try {
      const result = await auth(provider, { serverUrl: target.url, ...scopeOf(target), fetchFn: oauthFetch(this.env, target) });
      // The SDK falls back to /authorize and /token at the server's origin when it finds no
      // metadata at all; a server that publishes none is not one the MCP authorization spec describes.
      const missing = missingMetadata(provider.current.discovery);
      if (missing) return { failed: missing };
      if (result !== "REDIRECT" || provider.authorizationUrl === undefined) return { failed: "its authorization server issued a token without a sign-in" };
    } catch (error) {
      return { failed: missingMetadata(provider.current.discovery) ?? describeSetupFailure(error, scrubFor(this.env, target)) };
    }
    const { state, verifier, client, discovery } = provider.current;
    if (state === undefined || verifier === undefined || client === undefined)
      return { failed: "the sign-in could not be prepared (no client or PKCE verifier)" };
    const flowId = randomToken();
    const cipher = await this.seal();
    this.sql.exec(
      `INSERT INTO connect_flows (id, server_key, target, state, verifier, client, discovery, authorization_url, redirect_url, requested_by, created_at, expires_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      flowId,
      key,
      JSON.stringify(target),
      state,
      await cipher.seal(verifier, `verifier ${flowId}`),
      await cipher.seal(client, `client ${key}`),
      discovery === undefined ? null : JSON.stringify(discovery),
      provider.authorizationUrl.href,
      redirectUrl,
      requestedBy,
      now,
      now + FLOW_TTL_MS,
    );
    return { flowId };
  }

  /** The flow behind a connect link, if it is this owner's and has not expired. */
  async flow(flowId: string): Promise<ConnectFlowView | null> {
    const row = this.sql.exec<FlowRow>(`SELECT * FROM connect_flows WHERE id = ?`, flowId).toArray()[0];
    if (!row || row.expires_at < Date.now()) return null;
    const target = JSON.parse(row.target) as ConnectionTarget;
    const authorizationUrl = new URL(row.authorization_url);
    return {
      flowId: row.id,
      serverId: target.serverId,
      skill: target.skill,
      url: target.url,
      scopes: authorizationUrl.searchParams.get("scope")?.split(" ").filter(Boolean) ?? target.scopes ?? [],
      authorizationUrl: authorizationUrl.href,
      authorizationOrigin: authorizationUrl.origin,
      expiresAt: row.expires_at,
      completedAt: row.completed_at,
    };
  }

  /** Whether the flow has finished (for `notifications/elicitation/complete` and waiting callers). */
  async flowCompleted(flowId: string): Promise<boolean> {
    const row = this.sql.exec<{ completed_at: number | null }>(`SELECT completed_at FROM connect_flows WHERE id = ?`, flowId).toArray()[0];
    // -1 marks a callback being redeemed (single use); only a stored connection counts as done.
    return (row?.completed_at ?? 0) > 0;
  }

  /**
   * The authorization server's redirect: redeems `code` for the flow whose `state` matches. Only
   * this owner's flows are looked at, so a callback carrying another member's state (or an
   * attacker's code) connects nothing here.
   */
  async finish(state: string, code: string, iss: string | undefined, connectedBy: string): Promise<FinishAnswer> {
    const row = this.sql.exec<FlowRow>(`SELECT * FROM connect_flows WHERE state = ?`, state).toArray()[0];
    if (!row || row.expires_at < Date.now()) return { refused: "this sign-in was not started by you, or it expired" };
    if (row.completed_at !== null) return { refused: "this sign-in was already used" };
    const target = JSON.parse(row.target) as ConnectionTarget;
    const cipher = await this.seal();
    const verifier = await cipher.open(row.verifier, `verifier ${row.id}`);
    const client = storedClientSchema.safeParse(await cipher.open(row.client, `client ${row.server_key}`));
    if (typeof verifier !== "string" || !client.success) return { refused: "this sign-in's stored state could not be read (was CONNECTIONS_KEY changed?)" };
    // Single use: marked before the exchange, so a replayed callback cannot redeem twice.
    this.sql.exec(`UPDATE connect_flows SET completed_at = ? WHERE id = ?`, -1, row.id);
    const provider = new ConnectionOAuthProvider(this.env, cipher, {
      target,
      redirectUrl: row.redirect_url,
      state,
      verifier,
      client: client.data,
      ...(row.discovery === null ? {} : { discovery: JSON.parse(row.discovery) as OAuthDiscoveryState }),
    });
    try {
      await auth(provider, {
        serverUrl: target.url,
        authorizationCode: code,
        ...(iss === undefined ? {} : { iss }),
        fetchFn: oauthFetch(this.env, target),
      });
    } catch (error) {
      return { refused: describeSetupFailure(error, scrubFor(this.env, target)) };
    }
    const tokens = storedTokensSchema.safeParse(provider.savedTokens);
    if (!tokens.success) return { refused: "the authorization server returned no usable token" };
    const now = Date.now();
    await this.store(row.server_key, target, tokens.data, provider.current.client ?? client.data, provider.current.discovery, connectedBy, now);
    this.sql.exec(`UPDATE connect_flows SET completed_at = ? WHERE id = ?`, now, row.id);
    log("info", "downstream connected", { server: target.serverId, skill: target.skill });
    return { serverId: target.serverId, skill: target.skill, serverKey: row.server_key };
  }

  /**
   * A usable access token for `target`, refreshed first when it expires within a minute or when
   * the server refused `stale` (a 401). A refresh that fails ends the connection: the member is
   * asked to connect again.
   */
  async accessToken(target: ConnectionTarget, stale?: string, holder?: string): Promise<TokenAnswer> {
    const answer = await this.currentToken(target, stale);
    if (holder !== undefined && "token" in answer) this.holders.record(serverKey(target.url), holder);
    return answer;
  }

  private async currentToken(target: ConnectionTarget, stale: string | undefined): Promise<TokenAnswer> {
    const key = serverKey(target.url);
    const pending = this.refreshing.get(key);
    if (pending) return pending;
    if (target.grant === "client_credentials") return this.clientCredentialsToken(target, key, stale);
    const row = this.row(key);
    if (!row) return { missing: "it is not connected" };
    const cipher = await this.seal();
    const tokens = storedTokensSchema.safeParse(await cipher.open(row.tokens, `tokens ${key}`));
    if (!tokens.success) {
      this.delete(key);
      return { missing: "its stored token could not be read (CONNECTIONS_KEY changed?)" };
    }
    const refused = stale !== undefined && tokens.data.access_token === stale;
    const due = row.expires_at !== null && row.expires_at - REFRESH_AHEAD_MS <= Date.now();
    if (!refused && !due) return { token: tokens.data.access_token, expiresAt: row.expires_at };
    if (tokens.data.refresh_token === undefined) {
      if (refused || (row.expires_at ?? 0) <= Date.now()) {
        this.delete(key);
        return { missing: refused ? "the server refused its token" : "its token expired and the server gave no refresh token" };
      }
      return { token: tokens.data.access_token, expiresAt: row.expires_at };
    }
    const refresh = this.refresh(row, target, tokens.data).finally(() => this.refreshing.delete(key));
    this.refreshing.set(key, refresh);
    return refresh;
  }

  /** Ends the connection; the sessions holding its token forget it before this answers. */
  async remove(url: string): Promise<boolean> {
    const key = serverKey(url);
    const removed = this.delete(key);
    await this.holders.tell([key]);
    return removed;
  }

  /** Ends every connection (and sign-in in progress); the sessions holding their tokens forget them before this answers. */
  async removeAll(): Promise<number> {
    const keys = this.sql
      .exec<{ server_key: string }>(`SELECT server_key FROM connections`)
      .toArray()
      .map((row) => row.server_key);
    this.sql.exec(`DELETE FROM connections`);
    this.sql.exec(`DELETE FROM connect_flows`);
    await this.holders.tell(keys);
    return keys.length;
  }

  /**
   * A team server with `grant: "client_credentials"`: the stored token while it is good, else a
   * new one requested with the client's id and secret (Worker secrets named in the catalog), no
   * sign-in and no refresh token. A failure is `missing` with what went wrong, so the run says it.
   */
  private async clientCredentialsToken(target: ConnectionTarget, key: string, stale: string | undefined): Promise<TokenAnswer> {
    const row = this.row(key);
    if (row) {
      const tokens = storedTokensSchema.safeParse(await (await this.seal()).open(row.tokens, `tokens ${key}`));
      const due = row.expires_at !== null && row.expires_at - REFRESH_AHEAD_MS <= Date.now();
      if (tokens.success && tokens.data.access_token !== stale && !due) return { token: tokens.data.access_token, expiresAt: row.expires_at };
    }
    const fetching = this.fetchClientCredentials(target, key, row).finally(() => this.refreshing.delete(key));
    this.refreshing.set(key, fetching);
    return fetching;
  }

  private async fetchClientCredentials(target: ConnectionTarget, key: string, row: ConnectionRow | undefined): Promise<TokenAnswer> {
    const cipher = await this.seal();
    const provider = new ConnectionOAuthProvider(this.env, cipher, {
      target,
      // Unused: the grant has no redirect (the provider answers none to the SDK).
      redirectUrl: "https://invalid.invalid/connect/callback",
      ...(row?.discovery ? { discovery: JSON.parse(row.discovery) as OAuthDiscoveryState } : {}),
    });
    try {
      const result = await auth(provider, { serverUrl: target.url, ...scopeOf(target), fetchFn: oauthFetch(this.env, target) });
      const tokens = storedTokensSchema.safeParse(provider.savedTokens);
      const client = provider.current.client;
      if (result !== "AUTHORIZED" || !tokens.success || client === undefined)
        return { missing: "its authorization server returned no usable token for the client credentials" };
      const now = Date.now();
      await this.store(key, target, tokens.data, client, provider.current.discovery, CLIENT_CREDENTIALS_ACTOR, row?.connected_at ?? now, row ? now : null);
      log("info", "downstream token fetched with client credentials", { server: target.serverId });
      return { token: tokens.data.access_token, expiresAt: this.row(key)?.expires_at ?? null };
    } catch (error) {
      const reason = missingMetadata(provider.current.discovery) ?? describeSetupFailure(error, scrubFor(this.env, target));
      log("warn", "downstream client-credentials token failed", { server: target.serverId, reason });
      return { missing: `its token could not be fetched with the client credentials: ${reason}` };
    }
  }

  private async refresh(row: ConnectionRow, target: ConnectionTarget, tokens: StoredTokens): Promise<TokenAnswer> {
    const cipher = await this.seal();
    const client = storedClientSchema.safeParse(await cipher.open(row.client, `client ${row.server_key}`));
    if (!client.success) {
      this.delete(row.server_key);
      return { missing: "its client registration could not be read" };
    }
    const provider = new ConnectionOAuthProvider(this.env, cipher, {
      target,
      // A refresh never redirects; a failed one leaves a URL nobody follows.
      redirectUrl: "https://invalid.invalid/connect/callback",
      state: randomToken(),
      client: client.data,
      tokens,
      ...(row.discovery === null ? {} : { discovery: JSON.parse(row.discovery) as OAuthDiscoveryState }),
    });
    try {
      const result = await auth(provider, { serverUrl: target.url, fetchFn: oauthFetch(this.env, target) });
      const fresh = storedTokensSchema.safeParse(provider.savedTokens);
      if (result === "AUTHORIZED" && fresh.success) {
        // Rotation (OAuth 2.1 §4.3.1): keep the new refresh token, or the old one if none came back.
        const kept = { ...fresh.data, ...(fresh.data.refresh_token === undefined && tokens.refresh_token ? { refresh_token: tokens.refresh_token } : {}) };
        await this.store(
          row.server_key,
          target,
          kept,
          provider.current.client ?? client.data,
          provider.current.discovery,
          row.connected_by,
          row.connected_at,
          Date.now(),
        );
        const stored = this.row(row.server_key);
        log("info", "downstream token refreshed", { server: target.serverId });
        return { token: kept.access_token, expiresAt: stored?.expires_at ?? null };
      }
    } catch (error) {
      log("warn", "downstream token refresh failed", { server: target.serverId, reason: describeSetupFailure(error, scrubFor(this.env, target)) });
    }
    this.delete(row.server_key);
    return { missing: "its token could not be refreshed" };
  }

  private async store(
    key: string,
    target: ConnectionTarget,
    tokens: StoredTokens,
    client: StoredClient,
    discovery: OAuthDiscoveryState | undefined,
    connectedBy: string,
    connectedAt: number,
    refreshedAt: number | null = null,
  ): Promise<void> {
    const cipher = await this.seal();
    const expiresAt = tokens.expires_in === undefined ? null : Date.now() + tokens.expires_in * 1000;
    this.sql.exec(
      `INSERT OR REPLACE INTO connections (server_key, server_id, skill, scope, tokens, client, discovery, expires_at, connected_by, connected_at, refreshed_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      key,
      target.serverId,
      target.skill,
      tokens.scope ?? target.scopes?.join(" ") ?? null,
      await cipher.seal(tokens, `tokens ${key}`),
      await cipher.seal(storedClientSchema.parse(client), `client ${key}`),
      discovery === undefined ? null : JSON.stringify(discovery),
      expiresAt,
      connectedBy,
      connectedAt,
      refreshedAt,
    );
  }

  private row(key: string): ConnectionRow | undefined {
    return this.sql.exec<ConnectionRow>(`SELECT * FROM connections WHERE server_key = ?`, key).toArray()[0];
  }

  private delete(key: string): boolean {
    return this.sql.exec(`DELETE FROM connections WHERE server_key = ?`, key).rowsWritten > 0;
  }

  private seal(): Promise<TokenCipher> {
    this.cipher ??= TokenCipher.fromEnv(this.env).catch((error: unknown) => {
      this.cipher = undefined;
      throw error;
    });
    return this.cipher;
  }
}

function scopeOf(target: ConnectionTarget): { scope?: string } {
  return target.scopes === undefined ? {} : { scope: target.scopes.join(" ") };
}
