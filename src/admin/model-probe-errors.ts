import { SlipsnisseError } from "../errors";

/** The probe's one-token call had no answer within its bound; the provider may still be slow or stuck. */
export class ModelProbeTimedOutError extends SlipsnisseError {
  readonly kind = "model-probe-timed-out";
  readonly fix = "Check that the endpoint serves this model and is not overloaded, or probe again with a larger timeout_ms (up to 30000).";
  constructor(
    readonly provider: string,
    readonly model: string,
    readonly timeoutMs: number,
  ) {
    super(`The ${provider} model "${model}" did not answer a one-token request within ${timeoutMs} ms.`);
  }
}
