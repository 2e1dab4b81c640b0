import { Hono } from "hono";
import { html } from "hono/html";
import { type AuthConfig, readAuthConfig } from "../auth/auth-config";
import { AuthConfigError } from "../auth/auth-errors";
import type { IdentityProvider } from "../auth/identity/identity-provider";
import { selectIdentityProvider } from "../auth/identity/select-identity-provider";
import { userIdFor } from "../auth/identity/upstream-identity";
import { recordSignIn } from "../auth/member-directory";
import { isMemberRemoved } from "../auth/member-removals";
import { decideMembership } from "../auth/membership-policy";
import type { Role, UserProps } from "../auth/user-props";
import { SlipsnisseError } from "../errors";
import { log } from "../observability/logger";
import { isDashboardMisconfiguration } from "./dashboard-errors";
import { dashboardMessage, renderDashboardPage } from "./dashboard-layout";
import { clearCookie, LOGIN_COOKIE, newLoginTransaction, newSession, readLoginTransaction } from "./dashboard-session";
import { landingPath, safeReturnPath } from "./return-path";

export const LOGIN_PATH = "/admin/login";
export const CALLBACK_PATH = "/admin/login/callback";

/** Members sign in here too (for /connect): the sign-in pages name Slipsnisse, not its admin dashboard. */
const SIGN_IN_FRAME = { audience: "anyone" } as const;

/**
 * Sign-in to Slipsnisse's own pages: the same upstream identity provider and membership decision
 * as the OAuth flow (src/auth/), without an OAuth client in between. Admins sign in here for the
 * dashboard, every member for their connections (/connect): a member sent here from a connect
 * page goes back to it (`next`, return-path.ts), one who came on their own lands on /connect. The transaction (state, PKCE verifier,
 * nonce, the dev login picked) lives in a signed, short-lived cookie; the callback accepts only
 * the state that cookie names, then sets the session cookie.
 *
 * The provider must accept `<origin>/admin/login/callback` as a redirect URI (register it beside
 * /auth/callback at GitHub or the OIDC provider).
 */
export function dashboardLoginRoutes(): Hono<{ Bindings: Env }> {
  const routes = new Hono<{ Bindings: Env }>();

  routes.get("/login", async (c) => {
    const setup = await authSetup(c.env, c.req.url);
    if (setup instanceof Response) return setup;
    const { idp } = setup;
    // Links, not a form: the next hop is the identity provider's origin, and `form-action 'self'` would block the redirect there.
    const choices = idp.loginChoices ?? [];
    const next = safeReturnPath(c.req.query("next"));
    const carry = next === undefined ? "" : `next=${encodeURIComponent(next)}`;
    const body = html`<h1>Sign in to Slipsnisse</h1>${
      next === undefined
        ? html`<p>Sign in with ${idp.name}. Admins of this team reach the admin dashboard; every member reaches their own connections (the accounts their experts use at other servers).</p>`
        : html`<p>Sign in with ${idp.name} as the member this page is for: you come back to it once you are signed in.</p>`
    }
${
  choices.length > 0
    ? html`<ul>${choices.map((login) => html`<li><a href="${LOGIN_PATH}/start?login=${encodeURIComponent(login)}${carry ? `&${carry}` : ""}">Sign in as ${login}</a></li>`)}</ul>`
    : html`<p><a href="${LOGIN_PATH}/start${carry ? `?${carry}` : ""}">Sign in</a></p>`
}`;
    return renderDashboardPage({ title: "Sign in", ...SIGN_IN_FRAME }, body);
  });

  routes.get("/login/start", async (c) => {
    const setup = await authSetup(c.env, c.req.url);
    if (setup instanceof Response) return setup;
    const { idp, origin } = setup;
    try {
      const login = idp.loginChoices ? (c.req.query("login") ?? idp.loginChoices[0]) : undefined;
      const { transaction, setCookie } = await newLoginTransaction(c.env, login, safeReturnPath(c.req.query("next")));
      const data = { verifier: transaction.verifier, nonce: transaction.nonce, ...(login === undefined ? {} : { login }) };
      const location = await idp.authorizeUrl({ state: transaction.state, callbackUrl: `${origin}${CALLBACK_PATH}`, data });
      return new Response(null, { status: 302, headers: { Location: location, "Set-Cookie": setCookie, "Cache-Control": "no-store" } });
    } catch (error) {
      return failure(error);
    }
  });

  routes.get("/login/callback", async (c) => {
    const setup = await authSetup(c.env, c.req.url);
    if (setup instanceof Response) return setup;
    const { idp, origin, config } = setup;
    const clear = { "Set-Cookie": clearCookie(LOGIN_COOKIE) };
    try {
      const transaction = await readLoginTransaction(c.req.raw, c.env);
      if (!transaction || transaction.state !== c.req.query("state")) {
        return dashboardMessage(
          400,
          "Sign-in expired",
          "This sign-in did not start in this browser or took longer than 10 minutes. Start again from the sign-in page.",
          SIGN_IN_FRAME,
          clear,
        );
      }
      if (c.req.query("error") !== undefined) return dashboardMessage(403, "Not signed in", "The identity provider did not sign you in.", SIGN_IN_FRAME, clear);
      const data = { verifier: transaction.verifier, nonce: transaction.nonce, ...(transaction.login === undefined ? {} : { login: transaction.login }) };
      const identity = await idp.finish({ request: c.req.raw, callbackUrl: `${origin}${CALLBACK_PATH}`, data });
      const userId = userIdFor(identity);
      const decision = (await isMemberRemoved(c.env, userId))
        ? { member: false as const, reason: `${identity.login} was removed from this team` }
        : decideMembership(config, identity);
      if (!decision.member)
        return dashboardMessage(
          403,
          "Not a member of this team",
          `${decision.reason}. Ask an admin of this Slipsnisse server to add you.`,
          SIGN_IN_FRAME,
          clear,
        );
      const user: UserProps = { userId, login: identity.login, email: identity.email, role: decision.role, idp: identity.provider, groups: identity.groups };
      // The members list shows who signed in, through the dashboard too.
      await recordSignIn(c.env.DB, user, Date.now()).catch((error: unknown) => log("warn", "member sign-in not recorded", { error: String(error) }));
      const { setCookie } = await newSession(c.env, user);
      const headers = new Headers({ Location: afterSignIn(transaction.next, user.role), "Cache-Control": "no-store" });
      headers.append("Set-Cookie", clear["Set-Cookie"]);
      headers.append("Set-Cookie", setCookie);
      return new Response(null, { status: 302, headers });
    } catch (error) {
      return failure(error, clear);
    }
  });

  return routes;
}

interface AuthSetup {
  config: AuthConfig;
  idp: IdentityProvider;
  origin: string;
}

async function authSetup(env: Env, url: string): Promise<AuthSetup | Response> {
  try {
    const config = readAuthConfig(env);
    return { config, idp: selectIdentityProvider(config, (input, init) => fetch(input, init)), origin: config.PUBLIC_URL ?? new URL(url).origin };
  } catch (error) {
    if (error instanceof AuthConfigError) return dashboardMessage(500, "Slipsnisse is misconfigured", error.toolMessage, SIGN_IN_FRAME);
    throw error;
  }
}

function failure(error: unknown, headers: Record<string, string> = {}): Promise<Response> {
  if (isDashboardMisconfiguration(error) && error instanceof SlipsnisseError)
    return dashboardMessage(500, "Slipsnisse is misconfigured", error.toolMessage, SIGN_IN_FRAME, headers);
  if (error instanceof SlipsnisseError)
    return dashboardMessage(error.kind === "dev-sign-in-refused" ? 403 : 400, "Sign-in failed", error.toolMessage, SIGN_IN_FRAME, headers);
  log("error", "dashboard sign-in failed", { error: String(error) });
  return dashboardMessage(
    502,
    "Sign-in failed",
    "The identity provider's answer could not be used. Try again; if it persists, look at the Worker's logs.",
    SIGN_IN_FRAME,
    headers,
  );
}

/** The page a fresh session opens: the connect page that sent the browser here, else the signed-in member's own start. */
function afterSignIn(next: string | undefined, role: Role): string {
  return safeReturnPath(next) ?? landingPath(role);
}
