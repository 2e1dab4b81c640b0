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
  idp: z.enum(["dev", "github", "oidc", "cloudflare-access"]).optional(),
  /** OIDC group claim values seen at sign-in, re-matched against ALLOWED_GROUPS at refresh. */
  groups: z.array(z.string()).optional(),
});

export type UserProps = z.infer<typeof userPropsSchema>;
export type Role = UserProps["role"];
