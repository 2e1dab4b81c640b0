import { Hono, type MiddlewareHandler } from "hono";
import { endDashboardSession } from "../auth/dashboard-session-revocations";
import { closeLiveSockets } from "../experts/live/live-run-feed";
import { SlipsnisseError } from "../errors";
import { log } from "../observability/logger";
import { type DashboardEnv, frameOf } from "./dashboard-context";
import { isDashboardMisconfiguration } from "./dashboard-errors";
import { dashboardMessage } from "./dashboard-layout";
import { dashboardLoginRoutes, LOGIN_PATH } from "./dashboard-login";
import { clearCookie, csrfToken, csrfTokenMatches, readCookie, SESSION_COOKIE, signedInSession } from "./dashboard-session";
import { catalogPages } from "./pages/catalog-pages";
import { connectionPages } from "./pages/connection-pages";
import { evalPages } from "./pages/eval-pages";
import { overviewPage } from "./pages/overview-page";
import { livePages } from "./pages/live-pages";
import { memberPages, type OAuthHelpersSource } from "./pages/member-pages";
import { runPages } from "./pages/run-pages";
import { serviceClientPages } from "./pages/service-client-pages";
import { serverPages } from "./pages/server-pages";
import { skillsPage } from "./pages/skills-page";

/**
 * The admin dashboard at /admin (the admin API stays at /admin/api). Pages need a session
 * cookie of an admin (dashboard-login.ts); under `npm start -- --no-auth` the loopback admin
 * gets one without signing in, as the admin API lets it in. Every POST carries the session's
 * CSRF token; every value is escaped by `hono/html`.
 */
export function dashboardRoutes(oauthHelpers?: OAuthHelpersSource): Hono<DashboardEnv> {
  const app = new Hono<DashboardEnv>();
  app.route("/", dashboardLoginRoutes());
  app.use("*", requireDashboardAdmin());
  app.post("/logout", async (c) => {
    // Server-side too: a copy of the cookie (another tab, a stolen one) is refused from now on.
    const session = c.get("session");
    await endDashboardSession(c.env, session);
    await closeLiveSockets(c.env, { sid: session.sid });
    return new Response(null, { status: 303, headers: { Location: LOGIN_PATH, "Set-Cookie": clearCookie(SESSION_COOKIE) } });
  });
  app.get("/", overviewPage);
  app.get("/skills", skillsPage);
  app.route("/", serverPages());
  app.route("/", catalogPages());
  app.route("/", evalPages());
  app.route("/", runPages());
  app.route("/", livePages());
  app.route("/", memberPages(oauthHelpers));
  app.route("/", serviceClientPages());
  app.route("/", connectionPages());
  app.all("*", (c) => dashboardMessage(404, "No such page", `Nothing is served at ${new URL(c.req.url).pathname}.`, frameOf(c)));
  app.onError((error, c) => {
    if (error instanceof SlipsnisseError)
      return dashboardMessage(
        isDashboardMisconfiguration(error) ? 500 : 400,
        isDashboardMisconfiguration(error) ? "Slipsnisse is misconfigured" : "Not possible",
        error.toolMessage,
        frameOf(c),
      );
    log("error", "dashboard page failed", { path: new URL(c.req.url).pathname, error: String(error) });
    return dashboardMessage(
      500,
      "This page failed",
      "Something unexpected went wrong; try again, and look at the Worker's logs (npx wrangler tail) if it persists.",
    );
  });
  return app;
}

function requireDashboardAdmin(): MiddlewareHandler<DashboardEnv> {
  return async (c, next) => {
    // A cookie was sent: if it fails (forged, expired, signed out, revoked), the answer clears it.
    const cookieSent = readCookie(c.req.raw, SESSION_COOKIE) !== undefined;
    const signedIn = await signedInSession(c.req.raw, c.env);
    if (!signedIn) {
      // A WebSocket handshake cannot follow a redirect to the sign-in page.
      const upgrade = c.req.header("upgrade")?.toLowerCase() === "websocket";
      // Without a cookie there is nothing to clear: clearing anyway let any site's cross-site
      // POST (SameSite=Lax sends no cookie) sign the admin out.
      const clear: Record<string, string> = cookieSent ? { "Set-Cookie": clearCookie(SESSION_COOKIE) } : {};
      if ((c.req.method === "GET" || c.req.method === "HEAD") && !upgrade)
        return new Response(null, { status: 302, headers: { Location: LOGIN_PATH, "Cache-Control": "no-store", ...clear } });
      return dashboardMessage(401, "Sign in first", "This action needs a signed-in admin. Sign in and try again.", {}, clear);
    }
    const { session, setCookie } = signedIn;
    const csrf = await csrfToken(c.env, session);
    // Sign-out stays open to a member, so a shared browser can switch to an admin's sign-in.
    const signOut = new URL(c.req.url).pathname === "/admin/logout";
    if (session.user.role !== "admin" && !signOut) {
      return dashboardMessage(
        403,
        "Admins only",
        `You are signed in as ${session.user.login}, a member of this team but not an admin. The dashboard is for admins; your own connections are at /connect. Ask an admin to add you to ADMIN_USERS if you need the dashboard.`,
        { login: session.user.login, csrf, nav: false },
      );
    }
    if (c.req.method !== "GET" && c.req.method !== "HEAD") {
      const form = await c.req.parseBody().catch(() => ({}) as Record<string, unknown>);
      const presented = form.csrf;
      if (!(await csrfTokenMatches(c.env, session, typeof presented === "string" ? presented : undefined))) {
        return dashboardMessage(
          403,
          "Form expired",
          "This form did not carry this session's security token (it may come from another tab or an old session). Reload the page and try again.",
          { login: session.user.login, csrf },
        );
      }
    }
    c.set("session", session);
    c.set("csrf", csrf);
    await next();
    // A 101's headers are the runtime's; the loopback admin's page load already set the cookie.
    if (setCookie && c.res.status !== 101) c.res.headers.append("Set-Cookie", setCookie);
  };
}
