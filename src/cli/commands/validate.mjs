// @ts-check
import { readCatalogFile } from "../catalog-file.mjs";
import { formatProblems, parseCatalog } from "../catalog-validator.mjs";
import { usageError } from "../cli-error.mjs";

/**
 * `validate <file>`: offline, with the admin API's checks and messages.
 * @param {string[]} args @param {Record<string, unknown>} _flags @param {import("../io.mjs").CliIo} io
 */
export async function validate(args, _flags, io) {
  const [file] = args;
  if (!file) throw usageError("validate needs a file: `npx slipsnisse validate catalog.json`.");
  const result = parseCatalog(await readCatalogFile(io.cwd, file));
  if (!result.ok) {
    io.stderr.write(`${file}: ${result.problems.length} problem(s):\n${formatProblems(result.problems)}\n`);
    return 1;
  }
  const skills = Object.keys(result.catalog.skills);
  io.stdout.write(`${file} is valid: ${skills.length} skill(s): ${skills.join(", ")}\n`);
  return 0;
}
