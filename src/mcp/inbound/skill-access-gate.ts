import { SkillAccessDeniedError } from "./skill-access-errors";

/** The 403 `{error, fix}` of a skill whose `access` does not list the caller. */
export function accessRefused(skill: string): Response {
  const error = new SkillAccessDeniedError(skill);
  return Response.json({ error: error.message, fix: error.fix }, { status: 403 });
}
