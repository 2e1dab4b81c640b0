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

/**
 * Writes rows as aligned columns (two spaces apart, no trailing blanks); the first row is the header.
 * @param {Output} output @param {readonly (readonly string[])[]} table
 */
export function writeTable(output, table) {
  const widths = (table[0] ?? []).map((_, column) => Math.max(...table.map((line) => (line[column] ?? "").length)));
  for (const line of table)
    output.write(
      `${line
        .map((cell, column) => cell.padEnd(widths[column] ?? 0))
        .join("  ")
        .trimEnd()}\n`,
    );
}
