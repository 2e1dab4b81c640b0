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

/**
 * A pre-registered client (auth.client_id_secret) met an authorization server other than the
 * one it was registered at: the issuer named in the catalog (auth.issuer), or else the first
 * one it was used with. Its id and secret were not sent. A server's protected-resource metadata
 * chooses the authorization server, so without this a hostile or compromised MCP server would
 * collect the secret registered for the real one.
 */
export class ClientIssuerMismatchError extends SlipsnisseError {
  readonly kind = "client-issuer-mismatch";
  readonly fix: string;
  constructor(
    readonly serverId: string,
    readonly expected: string,
    readonly actual: string,
    readonly configured: boolean,
  ) {
    super(
      `server "${serverId}" now names the authorization server ${actual}, but its client id and secret were registered at ${expected}${configured ? " (auth.issuer)" : " (the first issuer it was used with)"}, so nothing was sent to ${actual}`,
    );
    this.fix = configured
      ? `If "${serverId}" really moved to ${actual}, register a client there and update the catalog's auth.client_id_secret, auth.client_secret_secret and auth.issuer; otherwise the server's /.well-known/oauth-protected-resource has been tampered with.`
      : `If "${serverId}" really moved to ${actual}, set auth.issuer in the catalog to the issuer its client was registered at; otherwise the server's /.well-known/oauth-protected-resource has been tampered with.`;
  }
}

/**
 * The authorization server's metadata names a token endpoint on another origin than its issuer,
 * and the catalog does not name that endpoint (auth.token_endpoint): a pre-registered client's
 * secret is not sent there.
 */
export class TokenEndpointOriginError extends SlipsnisseError {
  readonly kind = "token-endpoint-origin";
  readonly fix: string;
  constructor(
    readonly serverId: string,
    readonly issuer: string,
    readonly tokenEndpoint: string,
  ) {
    super(
      `server "${serverId}"'s authorization server ${issuer} names the token endpoint ${tokenEndpoint}, on another origin, so its client id and secret were not sent there`,
    );
    this.fix = `If that endpoint is right, name it in the catalog as "${serverId}"'s auth.token_endpoint.`;
  }
}
