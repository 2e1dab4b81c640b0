/**
 * Local errors (vercel/ai style): one class per kind, typed fields, the message built from
 * them. `toolMessage` is the plain-language text an orchestrator sees in an MCP tool error:
 * what failed, which expert/server/model, what to do. It must never contain a secret or token.
 *
 * `kind` names the failure in kebab-case (`downstream-timeout`, `unknown-thread`), one per
 * class and unique across src/. It is recorded with every failed run (`error.kind` in the run
 * log) and tests match on it, so it stays stable once shipped. A class lives in its area's
 * errors module (a file named `*-errors.ts`: admin-errors.ts, auth-errors.ts, mcp-errors.ts,
 * runner-errors.ts, …), not beside the code that throws it.
 * test/unit/architecture/error-kinds.test.ts keeps the convention.
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
