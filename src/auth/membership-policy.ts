import type { AuthConfig } from "./auth-config";
import type { UpstreamIdentity } from "./identity/upstream-identity";
import type { Role } from "./user-props";

export type MembershipDecision = { member: true; role: Role } | { member: false; reason: string };

/**
 * Decides membership from the configured lists. Lists are alternatives: one match lets the user
 * in. Named admins are always members. With no list configured, only the dev and Cloudflare
 * Access providers admit anyone (Access has already applied its own policy at the edge);
 * GitHub and OIDC refuse to start without a list (auth-config.ts).
 */
export function decideMembership(config: AuthConfig, identity: UpstreamIdentity): MembershipDecision {
  const names = [identity.login, identity.email].filter((name): name is string => Boolean(name)).map((name) => name.toLowerCase());
  const isAdmin = names.some((name) => config.ADMIN_USERS.includes(name));
  if (isAdmin) return { member: true, role: "admin" };
  if (matchesLists(config, identity, names)) return { member: true, role: "member" };
  return { member: false, reason: `${identity.login} is not a member of this team` };
}

function matchesLists(config: AuthConfig, identity: UpstreamIdentity, names: string[]): boolean {
  const domain = identity.email?.split("@")[1]?.toLowerCase();
  const groups = (identity.groups ?? []).map((group) => group.toLowerCase());
  const anyList =
    config.ALLOWED_USERS.length + config.ALLOWED_EMAIL_DOMAINS.length + config.ALLOWED_GROUPS.length > 0 ||
    (config.idp.IDP === "github" && config.idp.GITHUB_ORG !== undefined);
  if (!anyList) return config.idp.IDP === "dev" || config.idp.IDP === "cloudflare-access";
  return (
    names.some((name) => config.ALLOWED_USERS.includes(name)) ||
    (domain !== undefined && config.ALLOWED_EMAIL_DOMAINS.includes(domain)) ||
    groups.some((group) => config.ALLOWED_GROUPS.includes(group)) ||
    identity.orgMember === true
  );
}
