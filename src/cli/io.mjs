// @ts-check
/**
 * Where the CLI reads and writes, passed in so tests can run commands in-process.
 * @typedef {{ write(text: string): unknown, isTTY?: boolean }} Output
 * @typedef {NodeJS.ReadableStream & { isTTY?: boolean }} Input
 * @typedef {{ stdout: Output, stderr: Output, stdin?: Input, env: Record<string, string | undefined>, cwd: string }} CliIo
 */

/** @returns {CliIo} */
export function processIo() {
  return { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin, env: process.env, cwd: process.cwd() };
}
