/**
 * The ExpertSession for a user and a skill. Tenants are separate deployments with separate
 * Durable Object namespaces; the tenant is still part of the name so a name read from a log or
 * a trace says whose it is. Components are URI-encoded so no user id can forge another's name.
 */
export function sessionName(tenant: string, skill: string, userId: string): string {
  return [tenant, skill, userId].map(encodeURIComponent).join(":");
}
