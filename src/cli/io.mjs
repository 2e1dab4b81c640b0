// @ts-check
/**
 * Where the CLI reads and writes, passed in so tests can run commands in-process.
 * @typedef {{ write(text: string): unknown, isTTY?: boolean }} Output
 * @typedef {{ stdout: Output, stderr: Output, env: Record<string, string | undefined>, cwd: string }} CliIo
 */

/** @returns {CliIo} */
export function processIo() {
  return { stdout: process.stdout, stderr: process.stderr, env: process.env, cwd: process.cwd() };
}
