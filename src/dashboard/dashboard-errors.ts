import { SlipsnisseError } from "../errors";

/** No key to sign dashboard session cookies with: neither DASHBOARD_SESSION_KEY nor ADMIN_TOKEN is set. */
export class DashboardSessionKeyMissingError extends SlipsnisseError {
  readonly kind = "dashboard-session-key-missing";
  readonly fix =
    "Set the DASHBOARD_SESSION_KEY secret to 32 or more random characters (`openssl rand -base64 32 | npx wrangler secret put DASHBOARD_SESSION_KEY`), or set ADMIN_TOKEN, from which the key is derived.";
  constructor() {
    super("The admin dashboard cannot sign its session cookies: no DASHBOARD_SESSION_KEY (or ADMIN_TOKEN) secret is set.");
  }
}

/** DASHBOARD_SESSION_KEY is set but too short to be a signing key. */
export class DashboardSessionKeyWeakError extends SlipsnisseError {
  readonly kind = "dashboard-session-key-weak";
  readonly fix = "Set DASHBOARD_SESSION_KEY to 32 or more random characters (`openssl rand -base64 32`).";
  constructor(readonly length: number) {
    super(`DASHBOARD_SESSION_KEY is ${length} characters long; a signing key needs at least 32.`);
  }
}

/** The server's misconfiguration (500), as opposed to a request that cannot be served. */
export function isDashboardMisconfiguration(error: unknown): boolean {
  return error instanceof DashboardSessionKeyMissingError || error instanceof DashboardSessionKeyWeakError;
}
