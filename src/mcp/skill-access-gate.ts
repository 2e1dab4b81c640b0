import type { UserProps } from "../auth/user-props";
import { loadSkill } from "../catalog/compiled-skill-cache";
import { canUseSkill } from "../catalog/skill-access";
import { SSE_PATH } from "./legacy-sse/legacy-sse-routes";
import { SkillAccessDeniedError } from "./skill-access-errors";

/** The 403 `{error, fix}` of a skill whose `access` does not list the caller. */
export function accessRefused(skill: string): Response {
  const error = new SkillAccessDeniedError(skill);
  return Response.json({ error: error.message, fix: error.fix }, { status: 403 });
}

/**
 * Opening a legacy SSE stream of a skill the caller may not use: the 403, or null to go on.
 * Messages on an open stream are not checked here; the session refuses their runs.
 */
export async function sseAccessRefusal(request: Request, env: Env, user: UserProps): Promise<Response | null> {
  const match = SSE_PATH.exec(new URL(request.url).pathname);
  if (!match || match[2] !== undefined || request.method !== "GET") return null;
  const skill = await loadSkill(env, match[1] ?? "default");
  return skill && !canUseSkill(skill.config, user) ? accessRefused(skill.name) : null;
}
