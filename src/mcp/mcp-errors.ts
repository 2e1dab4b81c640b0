import { SlipsnisseError } from "../errors";

/** A programming error: an MCP server was requested on a path that did not go through serveMcp. */
export class UnissuedRequestPropsError extends SlipsnisseError {
  readonly kind = "unissued-request-props";
  readonly fix = "Route MCP requests through serveMcp, which attaches the validated user and skill.";
  constructor() {
    super("An MCP server was requested without the props serveMcp issues; none was built.");
  }
}

/** The skill's `access` does not list the caller: a plain 403 on its endpoint, and nothing about the skill. */
export class SkillAccessDeniedError extends SlipsnisseError {
  readonly kind = "skill-access-denied";
  readonly fix = "Ask an admin to add you (or one of your groups) to the skill's `access` in the catalog.";
  constructor(readonly skill: string) {
    super(`You do not have access to skill "${skill}".`);
  }
}

