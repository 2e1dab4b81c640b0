import { SlipsnisseError } from "../../errors";

/** An `answer` that resumes nothing: no thread given, or the thread has no question pending. */
export class NoPendingQuestionError extends SlipsnisseError {
  readonly kind = "no-pending-question";
  readonly fix: string;
  constructor(
    readonly expert: string,
    readonly threadId?: string,
  ) {
    super(
      threadId === undefined
        ? `An \`answer\` to expert "${expert}" needs the \`thread\` of the question it answers.`
        : `Thread ${threadId} of expert "${expert}" has no question waiting for an answer.`,
    );
    this.fix = "Pass `answer` only with the thread of a question the expert asked; to ask something new, call without `answer`.";
  }
}

/** The answer came after the paused run's `ask_back_ttl_ms`; the run is gone. */
export class PausedRunExpiredError extends SlipsnisseError {
  readonly kind = "paused-run-expired";
  readonly fix = "Call the expert again without `answer` (the same thread keeps the earlier conversation) and include what the question asked for.";
  constructor(
    readonly expert: string,
    readonly threadId: string,
    readonly expiredAt: number,
  ) {
    super(`Expert "${expert}" stopped waiting for an answer on thread ${threadId} at ${new Date(expiredAt).toISOString()}: the paused run expired.`);
  }
}

/** A follow-up on a thread whose run is still waiting for its answer. */
export class QuestionPendingError extends SlipsnisseError {
  readonly kind = "question-pending";
  readonly fix = "Reply with this thread and `answer`, or start a new conversation without `thread`.";
  constructor(
    readonly expert: string,
    readonly threadId: string,
    readonly question: string,
  ) {
    super(`Expert "${expert}" is waiting for an answer on thread ${threadId} to its question: ${question}`);
  }
}

/** A follow-up or an `answer` on a thread whose run waits for a call to be approved. */
export class ApprovalPendingError extends SlipsnisseError {
  readonly kind = "approval-pending";
  readonly fix = "Reply with this thread and `approve: true` to run the call, or `approve: false` to refuse it; or start a new conversation without `thread`.";
  constructor(
    readonly expert: string,
    readonly threadId: string,
    readonly question: string,
  ) {
    super(`Expert "${expert}" is waiting on thread ${threadId} for a call to be approved. ${question}`);
  }
}

/** An `approve` that decides nothing: no thread given, or the thread's run waits for no approval. */
export class NoPendingApprovalError extends SlipsnisseError {
  readonly kind = "no-pending-approval";
  readonly fix: string;
  constructor(
    readonly expert: string,
    readonly threadId?: string,
  ) {
    super(
      threadId === undefined
        ? `\`approve\` for expert "${expert}" needs the \`thread\` of the call it approves.`
        : `Thread ${threadId} of expert "${expert}" has no call waiting for approval.`,
    );
    this.fix = 'Pass `approve` only with the thread of an "approval needed" answer; a question is answered with `answer`.';
  }
}
