import type { MiddlewareHandler } from "hono";
import { adminTokenUser } from "../auth/admin-token";
import { readAuthConfig } from "../auth/auth-config";
import { loopbackDevUser } from "../auth/loopback-dev-user";
import { currentRole } from "../auth/membership-policy";
import { userPropsSchema, type UserProps } from "../auth/user-props";

export type AdminVariables = { admin: UserProps };

/**
 * The admin API accepts, in order: the OAuth grant of a user with role admin (props on the
 * execution context, set by the OAuth provider), the ADMIN_TOKEN secret as a bearer token for
 * automation (the CLI), or the loopback dev user in local development. src/index.ts already
 * resolves the last two into props; checking again here keeps the routes safe wherever mounted.
 */
export function requireAdmin(): MiddlewareHandler<{ Bindings: Env; Variables: AdminVariables }> {
  return async (c, next) => {
    const fromGrant = userPropsSchema.safeParse(c.executionCtx.props);
    const admin =
      (fromGrant.success ? withRoleNow(c.env, fromGrant.data) : null) ?? (await adminTokenUser(c.req.raw, c.env)) ?? loopbackDevUser(c.req.raw, c.env);
    if (!admin)
      return c.json(
        {
          error: "Authentication required: an admin sign-in or the ADMIN_TOKEN bearer token.",
          fix: "Sign in as an admin, or send Authorization: Bearer <ADMIN_TOKEN>.",
        },
        401,
      );
    if (admin.role !== "admin")
      return c.json({ error: `User ${admin.login} is not an admin of this tenant.`, fix: "Ask an admin to add you to ADMIN_USERS." }, 403);
    c.set("admin", admin);
    await next();
  };
}

/**
 * A grant's role was decided at sign-in or the last refresh; ADMIN_USERS is matched again with
 * the same names (membership-policy.ts) so the admin API agrees with the dashboard at once. Only
 * signed-in users carry `idp`; the ADMIN_TOKEN and loopback users are admins by construction.
 */
function withRoleNow(env: Env, user: UserProps): UserProps {
  if (user.idp === undefined || user.role !== "admin") return user;
  try {
    return { ...user, role: currentRole(readAuthConfig(env), user) };
  } catch {
    return { ...user, role: "member" };
  }
}
