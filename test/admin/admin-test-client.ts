import { createExecutionContext, env, SELF, waitOnExecutionContext } from "cloudflare:test";
import type { UserProps } from "../../src/auth/user-props";
import type { CatalogProblem } from "../../src/catalog/catalog-problems";
import { createApp } from "../../src/app";

export const ADMIN = "http://localhost/admin/api";

export interface AdminAnswer {
  status: number;
  body: Record<string, unknown>;
  problems: CatalogProblem[];
}

/**
 * An admin API call through the Worker as the loopback dev user (the tests run with
 * ENVIRONMENT=test and AUTH=none, so requests to localhost are the admin "dev").
 */
export async function admin(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<AdminAnswer> {
  const response = await SELF.fetch(`${ADMIN}${path}`, {
    method,
    headers: { "content-type": "application/json", ...headers },
    ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) }),
  });
  const parsed = (await response.json()) as Record<string, unknown>;
  return { status: response.status, body: parsed, problems: (parsed.problems as CatalogProblem[] | undefined) ?? [] };
}

/** Calls the app in-process with the props an OAuth grant would carry, or with extra env vars. */
export async function adminAs(request: Request, { props, vars = {} }: { props?: UserProps; vars?: Record<string, string> } = {}): Promise<Response> {
  const ctx = createExecutionContext();
  const scoped: ExecutionContext = {
    waitUntil: (promise) => ctx.waitUntil(promise),
    passThroughOnException: () => ctx.passThroughOnException(),
    abort: (reason) => ctx.abort(reason),
    exports: ctx.exports,
    tracing: ctx.tracing,
    props: props ?? {},
  };
  const response = await createApp().fetch(request, { ...env, ...vars }, scoped);
  await waitOnExecutionContext(ctx);
  return response;
}

export function paths(problems: readonly CatalogProblem[]): string[] {
  return problems.map((problem) => problem.path);
}
