import { SlipsnisseError } from "../../errors";
import type { RequestStateProblem } from "../../experts/protocol/request-states";

const explained: Record<RequestStateProblem, string> = {
  unknown: "it was never issued to you, or it was altered",
  "another-expert": "it was issued for another expert or skill",
  expired: "it has expired",
  used: "it was already used once (a retry is answered once)",
};

/**
 * A 2026-07-28 retry whose `requestState` is not one this server issued to this user for this
 * expert and has not yet answered (src/experts/protocol/request-states.ts). Nothing of the paused run is said:
 * the state may be someone else's.
 */
export class RequestStateRefusedError extends SlipsnisseError {
  readonly kind = "request-state-refused";
  readonly fix = "Call the expert again without requestState; a paused run's thread can be continued with `thread` and `answer` or `approve`.";
  constructor(readonly problem: RequestStateProblem) {
    super(`The call's requestState was refused: ${explained[problem]}.`);
  }
}
