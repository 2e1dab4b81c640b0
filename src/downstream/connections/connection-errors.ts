import { SlipsnisseError } from "../../errors";

/**
 * Errors of connections: a downstream server reached as the signed-in user through the
 * server's own OAuth. Messages name the server and what is missing; never a token, code,
 * verifier or client secret.
 */

/** The caller has no usable connection to the server (never connected, revoked, or a refresh failed). */
export class ConnectionRequiredError extends SlipsnisseError {
  readonly kind = "connection-required";
  readonly fix: string;
  constructor(
    readonly serverId: string,
    readonly reason: string,
    readonly connection: "user" | "team",
  ) {
    super(`Downstream server "${serverId}" needs ${connection === "team" ? "the team's" : "your"} connection: ${reason}.`);
    this.fix =
      connection === "team"
        ? "An admin connects it for the team; then call the expert again."
        : "Call the expert again: the answer carries a link to connect your account.";
  }
}

/** CONNECTIONS_KEY, which encrypts tokens at rest, is not set or too short. */
export class ConnectionsKeyError extends SlipsnisseError {
  readonly kind = "connections-key-missing";
  readonly fix =
    "Set it with `openssl rand -base64 32 | npx wrangler secret put CONNECTIONS_KEY` (locally `npm start` writes one to .dev.vars). Changing it later makes every member connect again.";
  constructor(readonly problem: string) {
    super(`Connections cannot be used: the Worker secret CONNECTIONS_KEY ${problem}.`);
  }
}

/**
 * The server's OAuth could not be set up: its metadata (RFC 9728 protected-resource or RFC 8414
 * authorization-server) is missing or malformed, registration failed, or the token endpoint
 * refused. `reason` says which; text from the server is cut and passes no token.
 */
export class ConnectionSetupError extends SlipsnisseError {
  readonly kind = "connection-setup-failed";
  readonly fix: string;
  constructor(
    readonly serverId: string,
    readonly reason: string,
  ) {
    super(`Downstream server "${serverId}" cannot be connected: ${reason}.`);
    this.fix = `Check that "${serverId}" serves OAuth 2.1 metadata as the MCP authorization spec describes (/.well-known/oauth-protected-resource and its authorization server's metadata), or set its auth.client_id_secret in the catalog if it does not allow dynamic client registration.`;
  }
}

/**
 * A team server with `grant: "client_credentials"` whose authorization server does not offer
 * that grant (its metadata's grant_types_supported). Raised before the client's secret is sent.
 */
export class ClientCredentialsUnsupportedError extends SlipsnisseError {
  readonly kind = "client-credentials-unsupported";
  readonly fix =
    "Remove `grant: \"client_credentials\"` from the server's `auth` so an admin signs in for the team, or ask the server's operator whether it offers the grant.";
  constructor() {
    super("its authorization server's metadata does not list `client_credentials` in grant_types_supported, so no client secret was sent");
  }
}
