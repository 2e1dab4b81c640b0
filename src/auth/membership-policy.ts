import type { AuthConfig } from "./auth-config";
import { subjectOf, type UpstreamIdentity } from "./identity/upstream-identity";
import type { Role, UserProps } from "./user-props";

export type MembershipDecision = { member: true; role: Role } | { member: false; reason: string };

/**
 * Decides membership from the configured lists. Lists are alternatives: one match lets the user
 * in. Named admins are always members. With no list configured, only the dev and Cloudflare
 * Access providers admit anyone (Access has already applied its own policy at the edge);
 * GitHub and OIDC refuse to start without a list (auth-config.ts).
 *
 * The one decision for every way in: the OAuth callback, the refresh re-check, the dashboard's
 * sign-in and every dashboard and admin-API request (through `currentRole`).
 */
export function decideMembership(config: AuthConfig, identity: UpstreamIdentity): MembershipDecision {
  const names = listNames(identity);
  const isAdmin = names.some((name) => config.ADMIN_USERS.includes(name));
  if (isAdmin) return { member: true, role: "admin" };
  if (matchesLists(config, identity, names)) return { member: true, role: "member" };
  return { member: false, reason: `${identity.login} is not a member of this team` };
}

/**
 * The names ALLOWED_USERS and ADMIN_USERS entries are compared with: only what the provider
 * vouches for. OIDC's `preferred_username` and `name` are chosen by the user and, per OIDC Core
 * §5.7, neither unique nor stable, so an OIDC login is display only; its email counts only when
 * `email_verified` (the provider drops it otherwise). GitHub vouches for the login (today's
 * owner of the name) and for the numeric id, which survives renames (`github:<id>`), and for a
 * verified primary email. Cloudflare Access vouches for the email in its verified JWT.
 */
export function listNames(identity: Pick<UpstreamIdentity, "provider" | "subject" | "login" | "email">): string[] {
  const email = identity.email?.toLowerCase();
  const names: Array<string | undefined> =
    identity.provider === "oidc" || identity.provider === "cloudflare-access" || identity.provider === "enterprise"
      ? [email, `sub:${identity.subject}`]
      : identity.provider === "github"
        ? [identity.login.toLowerCase(), `github:${identity.subject}`, email]
        : [identity.login.toLowerCase(), email];
  return names.filter((name): name is string => name !== undefined && name.length > 0);
}

/**
 * The role ADMIN_USERS gives a signed-in user now (props from a grant or a dashboard session),
 * by the same names as at sign-in, so an admin taken off the list loses the role at the next
 * request. Membership itself (groups, domains, org) is re-checked at refresh
 * (refresh-membership-check.ts); props from before userIds were provider-scoped match nothing.
 */
export function currentRole(config: AuthConfig, user: UserProps): Role {
  // A service client is never an admin, whatever names ADMIN_USERS lists.
  if (user.idp === "service") return "member";
  const provider = user.idp ?? config.idp.IDP;
  const subject = subjectOf(user.userId, provider);
  if (subject === undefined) return "member";
  const names = listNames({ provider, subject, login: user.login, email: user.email });
  return names.some((name) => config.ADMIN_USERS.includes(name)) ? "admin" : "member";
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
