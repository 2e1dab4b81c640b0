import { AuthorizationError, CimdFetchError } from "@cloudflare/workers-oauth-provider";
import { DevSignInRefusedError, DevUserNotListedError, UpstreamSignInError } from "./auth-errors";
import { messagePage } from "./auth-pages";
import { SlipsnisseError } from "../errors";
import { log } from "../observability/logger";

/**
 * Maps a failure in the sign-in flow to what the browser should get (the table in
 * docs/architecture.md#sign-in):
 * a redirect back to the client only when the library validated its redirect URI, otherwise a
 * local page. Anything unexpected is rethrown and surfaces as a 500.
 */
export function authorizationFailure(error: unknown, headers?: Headers): Response {
  if (error instanceof AuthorizationError && error.redirectTo) {
    const redirect = new Headers(headers);
    redirect.set("Location", error.redirectTo);
    return new Response(null, { status: 302, headers: redirect });
  }
  if (error instanceof AuthorizationError) {
    return messagePage(400, "This sign-in cannot continue", `${error.description}. Start the connection again from your MCP client.`, headers);
  }
  if (error instanceof CimdFetchError) {
    return messagePage(400, "This app could not be verified", "Its client metadata document could not be fetched or is invalid.", headers);
  }
  if (error instanceof DevUserNotListedError) {
    return messagePage(403, "Not a dev user", error.toolMessage, headers);
  }
  if (error instanceof DevSignInRefusedError) {
    return messagePage(403, "Dev sign-in refused", error.toolMessage, headers);
  }
  if (error instanceof UpstreamSignInError) {
    return messagePage(502, "Sign-in failed", error.toolMessage, headers);
  }
  if (SlipsnisseError.is(error)) {
    return messagePage(500, "Sign-in is misconfigured", error.toolMessage, headers);
  }
  throw error;
}

/**
 * At /auth/callback everything left to go wrong came from the identity provider (its claims,
 * tokens, keys): an answer that cannot be used is a refused sign-in (502), never a 500 (issue 35).
 */
export function callbackFailure(error: unknown, headers?: Headers): Response {
  try {
    return authorizationFailure(error, headers);
  } catch {
    log("error", "sign-in callback failed", { error: error instanceof Error ? `${error.name}: ${error.message}` : String(error) });
    return messagePage(
      502,
      "Sign-in failed",
      "The identity provider's answer could not be used, so no access was granted. Try again; if it keeps failing, the server's operator finds the cause in the Worker's logs.",
      headers,
    );
  }
}
