import type { Context } from "hono";
import type { DashboardSession } from "./dashboard-session";

/** What every dashboard page sees: the Worker's bindings, and the signed-in admin's session and CSRF token. */
export type DashboardEnv = { Bindings: Env; Variables: { session: DashboardSession; csrf: string } };
export type DashboardContext = Context<DashboardEnv>;

/** Header details every page shows. */
export function frameOf(c: DashboardContext): { login?: string; csrf?: string } {
  const session = c.get("session") as DashboardSession | undefined;
  return session ? { login: session.user.login, csrf: c.get("csrf") } : {};
}
