import type { FetchLike } from "@modelcontextprotocol/client";
import { ConnectionRequiredError } from "./connection-errors";
import { connectionsStub, ownerFor, type ConnectionTarget } from "./connection-target";

/** How long a token read from UserConnections is reused without asking again: bounds how late a removed connection stops being used. */
export const TOKEN_MEMO_MS = 10_000;

/** Where a connection's current access token comes from; throws ConnectionRequiredError when there is none. */
export interface TokenSource {
  /** With `stale`: the server refused that token (401); answer a refreshed one or throw. */
  token(stale?: string): Promise<string>;
}

/**
 * The member's (or the team's) token for one server, from their UserConnections object, kept in
 * this session's memory for at most TOKEN_MEMO_MS (and never past the token's expiry), so a
 * warm call costs no extra round trip.
 */
export function connectionTokenSource(env: Env, target: ConnectionTarget, userId: string, now: () => number = Date.now): TokenSource {
  let memo: { token: string; until: number } | undefined;
  return {
    async token(stale) {
      if (stale === undefined && memo !== undefined && memo.until > now()) return memo.token;
      memo = undefined;
      const answer = await connectionsStub(env, ownerFor(target, userId)).accessToken(target, stale);
      if ("missing" in answer) throw new ConnectionRequiredError(target.serverId, answer.missing, target.connection);
      memo = { token: answer.token, until: Math.min(now() + TOKEN_MEMO_MS, answer.expiresAt ?? Number.POSITIVE_INFINITY) };
      return answer.token;
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
