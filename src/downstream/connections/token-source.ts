import type { FetchLike } from "@modelcontextprotocol/client";
import { ConnectionRequiredError } from "./connection-errors";
import { connectionsStub, ownerFor, type ConnectionTarget } from "./connection-target";

/**
 * How long a token read from UserConnections is reused without asking again. A connection that
 * is removed (disconnected, or its member removed) is dropped from every memo at once (`holder`
 * below); this bounds only a connection that ends otherwise: a refused or expired token.
 */
export const TOKEN_MEMO_MS = 10_000;

/** Where a connection's current access token comes from; throws ConnectionRequiredError when there is none. */
export interface TokenSource {
  /** With `stale`: the server refused that token (401); answer a refreshed one or throw. */
  token(stale?: string): Promise<string>;
  /** Drops the memo: the connection was removed, so the next request asks again. */
  forget?(): void;
}

export interface TokenSourceOptions {
  /**
   * The Durable Object id (hex) of the ExpertSession keeping the memo. UserConnections records it
   * with each token it hands out and tells that session to forget the token when the connection
   * is removed, so a removal takes effect on the next call rather than up to TOKEN_MEMO_MS later.
   */
  holder?: string;
  now?: () => number;
}

/**
 * The member's (or the team's) token for one server, from their UserConnections object, kept in
 * this session's memory for at most TOKEN_MEMO_MS (and never past the token's expiry), so a
 * warm call costs no extra round trip.
 */
export function connectionTokenSource(env: Env, target: ConnectionTarget, userId: string, options: TokenSourceOptions = {}): TokenSource {
  const now = options.now ?? Date.now;
  let memo: { token: string; until: number } | undefined;
  /** Counts `forget`s: a removal told while a token was on its way must not let that token be memoised. */
  let forgotten = 0;
  return {
    async token(stale) {
      if (stale === undefined && memo !== undefined && memo.until > now()) return memo.token;
      memo = undefined;
      const asked = forgotten;
      const answer = await connectionsStub(env, ownerFor(target, userId)).accessToken(target, stale, options.holder);
      if ("missing" in answer) throw new ConnectionRequiredError(target.serverId, answer.missing, target.connection);
      if (asked === forgotten) memo = { token: answer.token, until: Math.min(now() + TOKEN_MEMO_MS, answer.expiresAt ?? Number.POSITIVE_INFINITY) };
      return answer.token;
    },
    forget() {
      memo = undefined;
      forgotten += 1;
    },
  };
}

/**
 * A fetch that sends the connection's token as `Authorization: Bearer` (RFC 6750), and after a
 * 401 asks for a refreshed token once and sends the request again. A second 401 means the
 * connection is gone: ConnectionRequiredError, so the member is asked to connect again. Only
 * this server's requests go through it, so the token reaches no other host; `seen` learns each
 * token so text from the server can be scrubbed of it.
 */
export function connectedFetch(serverId: string, connection: "user" | "team", inner: FetchLike, source: TokenSource, seen: (token: string) => void): FetchLike {
  return async (input, init) => {
    const request = new Request(input, init);
    const token = await source.token();
    seen(token);
    const first = await inner(request.url, withBearer(request.clone(), token, init));
    if (first.status !== 401) return first;
    await first.body?.cancel();
    const fresh = await source.token(token);
    seen(fresh);
    const second = await inner(request.url, withBearer(request, fresh, init));
    if (second.status !== 401) return second;
    await second.body?.cancel();
    throw new ConnectionRequiredError(serverId, "the server refused its token after a refresh", connection);
  };
}

function withBearer(request: Request, token: string, init: RequestInit | undefined): RequestInit {
  const headers = new Headers(request.headers);
  headers.set("authorization", `Bearer ${token}`);
  return {
    method: request.method,
    headers,
    ...(request.body === null ? {} : { body: request.body, duplex: "half" }),
    ...(init?.signal ? { signal: init.signal } : {}),
  } as RequestInit;
}
