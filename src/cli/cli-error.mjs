// @ts-check
/** A failure the user can act on: what went wrong in plain words, and the fix. */
export class CliError extends Error {
  /**
   * @param {string} message what went wrong
   * @param {string} fix what to do about it
   * @param {number} [exitCode] 1 for failures, 2 for usage mistakes
   */
  constructor(message, fix, exitCode = 1) {
    super(message);
    this.fix = fix;
    this.exitCode = exitCode;
  }
}

/** @param {string} message @param {string} [fix] */
export function usageError(message, fix = "Run `npx slipsnisse --help` for the commands and options.") {
  return new CliError(message, fix, 2);
}
