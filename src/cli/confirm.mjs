// @ts-check
import { createInterface } from "node:readline/promises";

/**
 * True when a person can answer a question: both stdin and stdout are terminals (a pipe, CI or
 * a test is not asked; there a flag has to say yes).
 * @param {import("./io.mjs").CliIo} io
 */
export function interactive(io) {
  return Boolean(io.stdin?.isTTY && io.stdout.isTTY);
}

/**
 * Asks a yes/no question on the terminal; anything but y or yes (an empty line, end of input) is no.
 * @param {import("./io.mjs").CliIo} io
 * @param {string} question
 * @returns {Promise<boolean>}
 */
export async function confirm(io, question) {
  if (!io.stdin) return false;
  io.stdout.write(`${question} [y/N] `);
  const lines = createInterface({ input: io.stdin });
  try {
    for await (const line of lines) return /^y(es)?$/i.test(line.trim());
    return false;
  } finally {
    lines.close();
  }
}
