import { SlipsnisseError } from "../../errors";

/**
 * What went wrong while setting up or using a server's OAuth, in words that name what was
 * missing. The SDK's errors say which step failed; text from the server is cut, and no value we
 * sent (code, verifier, token) is ever part of it.
 */
export function describeSetupFailure(error: unknown): string {
  if (error instanceof SlipsnisseError) return error.message;
  const message = error instanceof Error ? error.message : String(error);
  const text = message.replace(/\s+/g, " ").slice(0, 300);
  if (/protected resource metadata/i.test(text)) return `its protected-resource metadata (RFC 9728) is missing or malformed: ${text}`;
  if (/authorization server metadata|does not support|metadata/i.test(text))
    return `its authorization-server metadata (RFC 8414 / OpenID discovery) is missing or malformed: ${text}`;
  if (/regist/i.test(text)) return `it did not register Slipsnisse as a client (dynamic client registration): ${text}`;
  return `its OAuth sign-in failed: ${text}`;
}
