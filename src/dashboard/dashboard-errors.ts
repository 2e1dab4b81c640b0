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

/**
 * Text meant for a raw text element (`<style>`, `<script>`) holds what would end the element
 * early or change how the parser reads it. Only our own constants go there, so this is a
 * programming error, thrown when the module loads.
 */
export class UnsafeRawElementTextError extends SlipsnisseError {
  readonly kind = "unsafe-raw-element-text";
  readonly fix = "Keep `</style`, `</script` and `<!--` out of the dashboard's stylesheet and scripts (write `<\\/` in a script's strings).";
  constructor(
    readonly element: string,
    readonly found: string,
  ) {
    super(`The dashboard's <${element}> text contains "${found}", which the HTML parser would read as the element's end or a comment.`);
  }
}
