import { SlipsnisseError } from "../../errors";

/** The expert named in a call is not in the skill's live catalog. */
export class UnknownExpertError extends SlipsnisseError {
  readonly kind = "unknown-expert";
  readonly fix = "List the tools again: the catalog may have changed since the client last did.";
  constructor(
    readonly skill: string,
    readonly expert: string,
  ) {
    super(`Skill "${skill}" has no expert named "${expert}".`);
  }
}

/** A `thread` handle this user's session never minted (or another user's). */
export class UnknownThreadError extends SlipsnisseError {
  readonly kind = "unknown-thread";
  readonly fix = "Call the expert without `thread` to start a new conversation.";
  constructor(readonly threadId: string) {
    super(`Thread ${threadId} does not exist for this user and skill (threads are private to the user who started them).`);
  }
}

/** A `thread` handle of this user's, but started by another expert of the skill. */
export class ThreadOfAnotherExpertError extends SlipsnisseError {
  readonly kind = "thread-of-another-expert";
  readonly fix: string;
  constructor(
    readonly threadId: string,
    readonly owner: string,
    readonly expert: string,
  ) {
    super(`Thread ${threadId} belongs to expert "${owner}", not "${expert}" (a thread continues only with the expert that started it).`);
    this.fix = `Call "${owner}" with this thread, or call "${expert}" without \`thread\` to start a new conversation.`;
  }
}
