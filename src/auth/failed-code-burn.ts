import type { OAuthErrorInternal, OAuthHelpers } from "@cloudflare/workers-oauth-provider";

/**
 * The provider's refusals of an authorization code that it had already matched to its grant
 * (the code is genuine) but that failed a later check: the PKCE verifier, the redirect URI, the
 * client. RFC 6749 §10.5 and OAuth 2.1 §4.1.3 make a code single-use, and a failed attempt is a
 * use: left redeemable, an intercepted code could be tried again and again. The provider itself
 * burns a code only on replay. Refusals before the match (`code_mismatch`, `grant_not_found`)
 * burn nothing, or a guess at someone's grant id would cancel their sign-in.
 */
const BURNING_REASONS: ReadonlySet<string> = new Set([
  "client_mismatch",
  "pkce_method_invalid",
  "redirect_uri_missing",
  "redirect_uri_invalid",
  "redirect_uri_mismatch",
  "unexpected_code_verifier",
  "code_verifier_missing",
  "code_verifier_mismatch",
]);

/**
 * The provider tells only its synchronous `onError` hook why it refused, without the request;
 * the response that hook returns is the one the request gets, so a mark on it reaches
 * {@link exchangeBurningFailedCodes} for exactly this request. It never leaves the Worker.
 */
const BURN_MARK = "X-Slipsnisse-Burn-Code";

interface ProviderError {
  code: string;
  description: string;
  status: number;
  headers: Record<string, string>;
  internal: OAuthErrorInternal;
}

/**
 * The provider's `onError` hook: the provider's own error response (RFC 6749 §5.2 JSON), marked
 * when the refused code must be burnt; undefined (the provider's default) otherwise.
 */
export function markCodeToBurn(error: ProviderError): Response | undefined {
  if (error.internal.category !== "authorization-code-grant" || !BURNING_REASONS.has(error.internal.reason)) return undefined;
  const headers = new Headers({ ...error.headers, "Content-Type": "application/json" });
  headers.set(BURN_MARK, "1");
  return new Response(JSON.stringify({ error: error.code, error_description: error.description }), { status: error.status, headers });
}

/**
 * Serves a /token request through `exchange` and, when the provider refused a genuine code for
 * one of the reasons above, revokes that code's grant so no later attempt can redeem it.
 */
export async function exchangeBurningFailedCodes(
  request: Request,
  exchange: (request: Request) => Promise<Response>,
  helpers: () => OAuthHelpers,
): Promise<Response> {
  const copy = request.clone();
  const response = await exchange(request);
  if (!response.headers.has(BURN_MARK)) return response;
  // The provider read the same form and checked the code's shape, `<userId>:<grantId>:<secret>`.
  const code = new URLSearchParams(new TextDecoder().decode(await copy.arrayBuffer())).get("code") ?? "";
  const [userId, grantId] = code.split(":");
  if (userId && grantId) await helpers().revokeGrant(grantId, userId);
  const headers = new Headers(response.headers);
  headers.delete(BURN_MARK);
  return new Response(response.body, { status: response.status, headers });
}
