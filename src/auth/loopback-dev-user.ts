import { isLocalDevelopment } from "../env";
import { isLoopbackHost } from "./loopback-host";
import { type UserProps, vouchFor } from "./user-props";

/**
 * Unauthenticated access for local development only: the Worker must be in a local
 * environment AND the request must have come to a loopback host. Anything else gets null and
 * must go through OAuth. The Host check matters because `ENVIRONMENT=local` alone could be
 * deployed by mistake.
 */
export function loopbackDevUser(request: Request, env: Env, url = new URL(request.url)): UserProps | null {
  if (!isLocalDevelopment(env) || env.AUTH !== "none") return null;
  const host = url.hostname;
  if (!isLoopbackHost(host)) return null;
  return vouchFor({ userId: "local:dev", login: "dev", role: "admin" });
}
