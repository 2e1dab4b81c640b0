import type { SkillConfig } from "./catalog-schema";

/** What access rules look at: the signed-in user's names, role and identity provider groups. */
export interface AccessSubject {
  userId: string;
  login: string;
  email?: string | undefined;
  role: "member" | "admin";
  groups?: readonly string[] | undefined;
  /** Which identity provider signed the user in: an OIDC or Access login is display only. */
  idp?: string | undefined;
  /** A service client's skills (src/auth/service-clients): the only ones it may use. */
  skills?: readonly string[] | undefined;
}

/**
 * Providers whose login is not vouched for: OIDC's `preferred_username` is chosen by the user
 * (OIDC Core §5.7: neither unique nor stable), Access's falls back to the subject. Only their
 * (verified) email and the user id count, as for ADMIN_USERS (src/auth/membership-policy.ts).
 */
const LOGIN_NOT_VOUCHED = new Set(["oidc", "cloudflare-access", "enterprise"]);

/**
 * Whether a user may use a skill: every member when the skill sets no `access`; otherwise admins
 * and the users or groups it lists. Logins, emails and groups compare case-insensitively (the
 * identity providers treat them so); user ids exactly. A login counts only where the provider
 * vouches for it (dev, GitHub). A service client may use the skills it was created for, and only those.
 */
export function canUseSkill(skill: string, config: Pick<SkillConfig, "access">, user: AccessSubject): boolean {
  // An admin named exactly these skills for the service client: that list is its access rule,
  // in place of the skill's own (which names people and groups, never a service client).
  if (user.skills !== undefined || user.idp === "service") return (user.skills ?? []).includes(skill);
  const access = config.access;
  if (access === undefined || user.role === "admin") return true;
  const login = user.idp !== undefined && LOGIN_NOT_VOUCHED.has(user.idp) ? "" : user.login;
  const names = new Set([login, user.email ?? ""].filter((name) => name !== "").map((name) => name.toLowerCase()));
  if (access.users.some((entry) => entry === user.userId || names.has(entry.toLowerCase()))) return true;
  const groups = new Set((user.groups ?? []).map((group) => group.toLowerCase()));
  return access.groups.some((group) => groups.has(group.toLowerCase()));
}
