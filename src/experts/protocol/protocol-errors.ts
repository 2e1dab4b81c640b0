import { SlipsnisseError } from "../../errors";

/** A request sent to the client mid-call (an elicitation) got no reply in time, or too many wait at once. */
export class ClientReplyTimeoutError extends SlipsnisseError {
  readonly kind = "client-reply-timeout";
  readonly fix = "Answer the client's prompt sooner; the run goes on as if it was dismissed.";
  constructor(
    readonly requestId: string,
    readonly timeoutMs: number,
  ) {
    super(
      timeoutMs > 0
        ? `The client did not answer request ${requestId} within ${timeoutMs} ms.`
        : `Too many requests to the client wait for replies; ${requestId} was not sent.`,
    );
  }
}

/**
 * A run a restart of its session cut off (a deploy, an eviction, `npm start` restarted): it has
 * no answer. Its record says "interrupted"; the call, a resumed stream and a task of it end so.
 */
export class RunInterruptedError extends SlipsnisseError {
  readonly kind = "run-interrupted";
  readonly fix = "The call can be retried: call the tool again (the run may have called downstream tools before it was cut off).";
  constructor(readonly runId: string) {
    super(`Run ${runId} was interrupted: the server restarted during the run, so it has no answer.`);
  }
}

/**
 * A resumed stream's run ended before the client came back, and the answer the session held for
 * the stream in memory is gone (a restart, or the stream expired); only the run's record is durable.
 */
export class StreamAnswerLostError extends SlipsnisseError {
  readonly kind = "stream-answer-lost";
  readonly fix: string;
  constructor(
    readonly runId: string,
    readonly outcome: string,
  ) {
    super(
      `Run ${runId} ended (${outcome}) before this stream was resumed, and its answer is no longer held for the stream (the server restarted, or the stream expired).`,
    );
    this.fix = `Read the run's record (resource slipsnisse://runs/${runId}), or call the tool again.`;
  }
}

/** A run still going past its budget's timeout and grace: a resumed stream stops waiting for it. */
export class RunOverdueError extends SlipsnisseError {
  readonly kind = "run-overdue";
  readonly fix: string;
  constructor(readonly runId: string) {
    super(`Run ${runId} has not ended within its budget's timeout; this stream stops waiting for it.`);
    this.fix = `Read the run's record later (resource slipsnisse://runs/${runId}), or call the tool again.`;
  }
}
