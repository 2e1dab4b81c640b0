import type { SkillConfig } from "./catalog-schema";

/** What access rules look at: the signed-in user's names, role and identity provider groups. */
export interface AccessSubject {
  userId: string;
  login: string;
  email?: string | undefined;
  role: "member" | "admin";
  groups?: readonly string[] | undefined;
}

/**
 * Whether a user may use a skill: every member when the skill sets no `access`; otherwise admins
 * and the users or groups it lists. Logins, emails and groups compare case-insensitively (the
 * identity providers treat them so); user ids exactly.
 */
export function canUseSkill(config: Pick<SkillConfig, "access">, user: AccessSubject): boolean {
  const access = config.access;
  if (access === undefined || user.role === "admin") return true;
  const names = new Set([user.login, user.email ?? ""].filter((name) => name !== "").map((name) => name.toLowerCase()));
  if (access.users.some((entry) => entry === user.userId || names.has(entry.toLowerCase()))) return true;
  const groups = new Set((user.groups ?? []).map((group) => group.toLowerCase()));
  return access.groups.some((group) => groups.has(group.toLowerCase()));
}
