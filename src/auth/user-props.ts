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
});

export type UserProps = z.infer<typeof userPropsSchema>;
export type Role = UserProps["role"];
