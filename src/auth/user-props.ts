import { z } from "zod";

/**
 * The identity that travels in the OAuth grant's props (workers-oauth-provider puts them on
 * `ctx.props` for API routes) into the MCP handlers and the ExpertSession, which is keyed by
 * `userId`. Never put tokens here: props are stored encrypted with the grant, but anything in
 * them reaches the handlers and could end up in a run record.
 */
export const userPropsSchema = z.object({
  userId: z.string().min(1),
  login: z.string().min(1),
  email: z.string().optional(),
  role: z.enum(["member", "admin"]),
  /** Which identity provider signed the user in; membership is re-checked against it at refresh. */
  idp: z.enum(["dev", "github", "oidc", "cloudflare-access", "enterprise", "service"]).optional(),
  /** OIDC group claim values seen at sign-in, re-matched against ALLOWED_GROUPS at refresh. */
  groups: z.array(z.string()).optional(),
  /**
   * A service client (idp "service", OAuth client credentials) may use only these skills, the
   * ones an admin named when creating it; a person's props never carry it.
   */
  skills: z.array(z.string()).optional(),
});

export type UserProps = z.infer<typeof userPropsSchema>;
export type Role = UserProps["role"];

/**
 * Users the auth layer in front of the routes made in this isolate: the grant's props as the API
 * guard parsed them, the loopback dev user, the admin token's user. The routes behind it read
 * `ctx.props` again, and one vouched for here is taken as it is rather than parsed a second time
 * on every request (a WeakMap: only these very objects, never a copy or a look-alike).
 */
const vouched = new WeakMap<object, UserProps>();

export function vouchFor(user: UserProps): UserProps {
  vouched.set(user, user);
  return user;
}

/** The signed-in user in `props`: as vouched for, else parsed; undefined when they do not parse. */
export function signedInUser(props: unknown): UserProps | undefined {
  const known = typeof props === "object" && props !== null ? vouched.get(props) : undefined;
  if (known !== undefined) return known;
  const parsed = userPropsSchema.safeParse(props);
  return parsed.success ? parsed.data : undefined;
}
