// @ts-check
/**
 * Shows that something slow is happening, on stderr so stdout stays clean for `pull`. A spinner
 * on a terminal; one line per step otherwise (CI logs, tests).
 * @template T
 * @param {import("./io.mjs").CliIo} io
 * @param {string} label e.g. "Fetching the live catalog"
 * @param {() => Promise<T>} work
 * @returns {Promise<T>}
 */
export async function withProgress(io, label, work) {
  const started = Date.now();
  const frames = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
  let frame = 0;
  const timer = io.stderr.isTTY ? setInterval(() => io.stderr.write(`\r${frames[frame++ % frames.length]} ${label}…`), 100) : undefined;
  if (!timer) io.stderr.write(`… ${label}\n`);
  try {
    return await work();
  } finally {
    if (timer) {
      clearInterval(timer);
      io.stderr.write(`\r\x1b[2K${label} (${((Date.now() - started) / 1000).toFixed(1)} s)\n`);
    }
  }
}
