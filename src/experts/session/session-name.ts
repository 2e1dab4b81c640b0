/**
 * The ExpertSession for a user and a skill. Tenants are separate deployments with separate
 * Durable Object namespaces; the tenant is still part of the name so a name read from a log or
 * a trace says whose it is. Components are URI-encoded so no user id can forge another's name.
 */
export function sessionName(tenant: string, skill: string, userId: string): string {
  return [tenant, skill, userId].map(encodeURIComponent).join(":");
}

/** The ExpertSession of one user in one skill of this tenant. */
export function sessionStub(env: Env, skill: string, userId: string): DurableObjectStub<import("./expert-session").ExpertSession> {
  return env.EXPERT_SESSION.get(env.EXPERT_SESSION.idFromName(sessionName(env.TENANT, skill, userId)));
}
