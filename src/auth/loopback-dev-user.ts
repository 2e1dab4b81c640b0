import { isLocalDevelopment } from "../env";
import type { UserProps } from "./user-props";

/**
 * Unauthenticated access for local development only: the Worker must be in a local
 * environment AND the request must have come to a loopback host. Anything else gets null and
 * must go through OAuth. The Host check matters because `ENVIRONMENT=local` alone could be
 * deployed by mistake.
 */
const LOOPBACK_HOSTS = new Set(["127.0.0.1", "localhost", "[::1]"]);

export function loopbackDevUser(request: Request, env: Env): UserProps | null {
  if (!isLocalDevelopment(env) || env.AUTH !== "none") return null;
  const host = new URL(request.url).hostname;
  if (!LOOPBACK_HOSTS.has(host)) return null;
  return { userId: "local:dev", login: "dev", role: "admin" };
}
