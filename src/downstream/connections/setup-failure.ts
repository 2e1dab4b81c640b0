import type { OAuthDiscoveryState } from "@modelcontextprotocol/client";
import { SlipsnisseError } from "../../errors";

/**
 * What went wrong while setting up or using a server's OAuth, in words that name what was
 * missing. The SDK's errors say which step failed; text from the server is cut, and no value we
 * sent (code, verifier, token) is ever part of it; `scrub` takes out a client secret the server echoed.
 */
export function describeSetupFailure(error: unknown, scrub: (text: string) => string = (text) => text): string {
  if (error instanceof SlipsnisseError) return error.message;
  const message = error instanceof Error ? error.message : String(error);
  // Scrubbed before it is cut: a cut through an echoed secret would leave a piece no scrub finds.
  const text = scrub(message).replace(/\s+/g, " ").slice(0, 300);
  if (/protected resource metadata/i.test(text)) return `its protected-resource metadata (RFC 9728) is missing or malformed: ${text}`;
  if (/authorization server metadata|does not support|metadata/i.test(text))
    return `its authorization-server metadata (RFC 8414 / OpenID discovery) is missing or malformed: ${text}`;
  if (/regist/i.test(text)) return `it did not register Slipsnisse as a client (dynamic client registration): ${text}`;
  return `its OAuth sign-in failed: ${text}`;
}

/** What a server that serves no OAuth metadata lacks, named for the admin; undefined when it serves some. */
export function missingMetadata(discovery: OAuthDiscoveryState | undefined): string | undefined {
  if (discovery === undefined || discovery.resourceMetadata !== undefined || discovery.authorizationServerMetadata !== undefined) return undefined;
  return "it serves no OAuth metadata: neither protected-resource metadata (RFC 9728, /.well-known/oauth-protected-resource) nor authorization-server metadata (RFC 8414 or OpenID discovery) was found";
}
