/**
 * Local errors (vercel/ai style): one class per kind, typed fields, the message built from
 * them. `toolMessage` is the plain-language text an orchestrator sees in an MCP tool error:
 * what failed, which expert/server/model, what to do. It must never contain a secret or token.
 */
export abstract class SlipsnisseError extends Error {
  abstract readonly kind: string;
  /** What to do about it, addressed to the person operating the server. */
  abstract readonly fix: string;

  get toolMessage(): string {
    return `${this.message} ${this.fix}`.trim();
  }

  static is(value: unknown): value is SlipsnisseError {
    return value instanceof SlipsnisseError;
  }
}
