import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import worker from "../../src/index";

export const ORIGIN = "http://127.0.0.1:8787";
export const SESSION_KEY = "dashboard-test-session-key-0123456789abcdef";

/** OAuth on with the dev identity provider: alice is an admin, bob a member. */
export const oauthVars = {
  AUTH: "oauth",
  ENVIRONMENT: "test",
  IDP: "dev",
  DEV_USER: "alice",
  DEV_USERS: "alice,bob",
  ADMIN_USERS: "alice",
  DASHBOARD_SESSION_KEY: SESSION_KEY,
};

/** The whole Worker (src/index.ts) with `vars` over the test env; redirects are returned, not followed. */
export async function dashboardFetch(path: string, init: RequestInit = {}, vars: Record<string, string> = oauthVars): Promise<Response> {
  const ctx = createExecutionContext();
  const request = new Request(`${ORIGIN}${path}`, { redirect: "manual", ...init });
  const response = await worker.fetch(request as Parameters<typeof worker.fetch>[0], { ...env, ...vars } as Env, ctx);
  await waitOnExecutionContext(ctx);
  return response;
}

function cookiePairs(response: Response): string[] {
  return response.headers.getSetCookie().map((line) => line.split(";")[0] ?? "");
}

/** Walks the dashboard sign-in as a dev login; returns the Cookie header of the session. */
export async function signInAs(login: string, vars: Record<string, string> = oauthVars): Promise<string> {
  const start = await dashboardFetch(`/admin/login/start?login=${login}`, {}, vars);
  if (start.status !== 302) throw new Error(`sign-in start answered ${start.status}: ${await start.text()}`);
  const location = new URL(start.headers.get("location") ?? "");
  const callback = await dashboardFetch(`${location.pathname}${location.search}`, { headers: { cookie: cookiePairs(start).join("; ") } }, vars);
  if (callback.status !== 302) throw new Error(`sign-in callback answered ${callback.status}: ${await callback.text()}`);
  const session = cookiePairs(callback).find((pair) => pair.startsWith("__Host-slipsnisse-dashboard=") && pair.length > "__Host-slipsnisse-dashboard=".length);
  if (!session) throw new Error("the callback set no session cookie");
  return session;
}

/** The CSRF token a page carries in its forms. */
export function csrfIn(page: string): string {
  const token = /name="csrf" value="([^"]+)"/.exec(page)?.[1];
  if (!token) throw new Error("no CSRF token on the page");
  return token;
}

export function form(fields: Record<string, string>, cookie?: string): RequestInit {
  return { method: "POST", body: new URLSearchParams(fields), headers: { "content-type": "application/x-www-form-urlencoded", ...(cookie ? { cookie } : {}) } };
}
