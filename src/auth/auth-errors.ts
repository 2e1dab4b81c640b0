import { SlipsnisseError } from "../errors";

/** A var or secret the auth code reads is missing or malformed. Raised at the first request. */
export class AuthConfigError extends SlipsnisseError {
  readonly kind = "auth-config";
  readonly fix: string;
  constructor(
    readonly variable: string,
    readonly problem: string,
    fix: string,
  ) {
    super(`Auth configuration: ${variable} ${problem}.`);
    this.fix = fix;
  }
}

/** The dev identity provider was reached outside loopback or outside a local environment. */
export class DevSignInRefusedError extends SlipsnisseError {
  readonly kind = "dev-sign-in-refused";
  readonly fix =
    "IDP=dev is only for `npm start` on 127.0.0.1/localhost with ENVIRONMENT=local. Set IDP to github, oidc or cloudflare-access for a deployed tenant.";
  /**
   * A non-local ENVIRONMENT is the server's misconfiguration (500); a non-loopback Host with a
   * local one is a request that must not be served, e.g. DNS rebinding (403).
   */
  readonly status: 403 | 500;
  constructor(
    readonly host: string,
    readonly environment: string,
    readonly reason: "environment" | "host",
  ) {
    super(`The dev identity provider refuses to sign anyone in here (host "${host}", ENVIRONMENT "${environment}").`);
    this.status = reason === "environment" ? 500 : 403;
  }
}

/** A login was picked on the dev consent page that DEV_USER / DEV_USERS do not list. */
export class DevUserNotListedError extends SlipsnisseError {
  readonly kind = "dev-user-not-listed";
  readonly fix = "Pick one of the logins the consent page offers, or start with the login in DEV_USERS (`DEV_USERS=alice,bob npm start`).";
  constructor(readonly login: string) {
    super(`The dev identity provider does not sign in "${login}": it is not DEV_USER and not in DEV_USERS.`);
  }
}

/** The upstream identity provider answered something we cannot turn into an identity. */
export class UpstreamSignInError extends SlipsnisseError {
  readonly kind = "upstream-sign-in";
  readonly fix = "Start the connection again from your MCP client. If it keeps failing, ask the server's operator to check the identity provider settings.";
  constructor(
    readonly provider: string,
    readonly step: string,
    readonly detail: string,
  ) {
    super(`Sign-in with ${provider} failed at ${step}: ${detail}.`);
  }
}
