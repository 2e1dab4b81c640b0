import { readSecret } from "../env";
import { ADMIN_API_PREFIX } from "./admin-api-refusal";
import { type UserProps, vouchFor } from "./user-props";

/**
 * Automation (the CLI, CI) authenticates to the admin API with the ADMIN_TOKEN secret as a
 * bearer token instead of an OAuth grant. Only admin API paths accept it, so the secret can
 * never open the MCP surface, and an unset secret disables it.
 */
export async function adminTokenUser(request: Request, env: Env): Promise<UserProps | null> {
  if (!new URL(request.url).pathname.startsWith(ADMIN_API_PREFIX)) return null;
  const expected = readSecret(env, "ADMIN_TOKEN");
  const header = request.headers.get("authorization");
  const presented = header?.startsWith("Bearer ") ? header.slice("Bearer ".length) : undefined;
  if (!expected || !presented) return null;
  return (await sameSecret(presented, expected)) ? vouchFor({ userId: "admin-token", login: "admin-token", role: "admin" }) : null;
}

/** Compares digests so neither the length nor the content of the secret leaks through timing. */
async function sameSecret(a: string, b: string): Promise<boolean> {
  const encoder = new TextEncoder();
  const [da, db] = await Promise.all([crypto.subtle.digest("SHA-256", encoder.encode(a)), crypto.subtle.digest("SHA-256", encoder.encode(b))]);
  return crypto.subtle.timingSafeEqual(da, db);
}
