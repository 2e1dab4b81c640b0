import { SlipsnisseError } from "../../errors";

/** The skill's `access` does not list the caller: a plain 403 on its endpoint, and nothing about the skill. */
export class SkillAccessDeniedError extends SlipsnisseError {
  readonly kind = "skill-access-denied";
  readonly fix = "Ask an admin to add you (or one of your groups) to the skill's `access` in the catalog.";
  constructor(readonly skill: string) {
    super(`You do not have access to skill "${skill}".`);
  }
}
