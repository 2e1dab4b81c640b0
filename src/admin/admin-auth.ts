import type { MiddlewareHandler } from "hono";
import { loopbackDevUser } from "../auth/loopback-dev-user";
import { userPropsSchema, type UserProps } from "../auth/user-props";
import { readSecret } from "../env";

export type AdminVariables = { admin: UserProps };

/**
 * The admin API accepts, in order: the OAuth grant of a user with role admin (props on the
 * execution context, set by the OAuth provider), the ADMIN_TOKEN secret as a bearer token for
 * automation (the CLI), or the loopback dev user in local development.
 */
export function requireAdmin(): MiddlewareHandler<{ Bindings: Env; Variables: AdminVariables }> {
  return async (c, next) => {
    const fromGrant = userPropsSchema.safeParse(c.executionCtx.props);
    const admin =
      (fromGrant.success ? fromGrant.data : null) ??
      (await adminFromToken(c.req.header("authorization"), c.env)) ??
      loopbackDevUser(c.req.raw, c.env);
    if (!admin) return c.json({ error: "Authentication required: an admin sign-in or the ADMIN_TOKEN bearer token." }, 401);
    if (admin.role !== "admin") return c.json({ error: `User ${admin.login} is not an admin of this tenant.` }, 403);
    c.set("admin", admin);
    await next();
  };
}

async function adminFromToken(header: string | undefined, env: Env): Promise<UserProps | null> {
  const expected = readSecret(env, "ADMIN_TOKEN");
  const presented = header?.startsWith("Bearer ") ? header.slice(7) : undefined;
  if (!expected || !presented) return null;
  return (await sameSecret(presented, expected)) ? { userId: "admin-token", login: "admin-token", role: "admin" } : null;
}

/** Compares digests so neither the length nor the content of the secret leaks through timing. */
async function sameSecret(a: string, b: string): Promise<boolean> {
  const encoder = new TextEncoder();
  const [da, db] = await Promise.all([
    crypto.subtle.digest("SHA-256", encoder.encode(a)),
    crypto.subtle.digest("SHA-256", encoder.encode(b)),
  ]);
  return crypto.subtle.timingSafeEqual(da, db);
}
