// @ts-check
import { adminClient } from "../admin-client.mjs";
import { readCatalogFile } from "../catalog-file.mjs";
import { diffCatalogs } from "../catalog-diff.mjs";
import { formatProblems, parseCatalog } from "../catalog-validator.mjs";
import { CliError, usageError } from "../cli-error.mjs";
import { withProgress } from "../progress.mjs";

/**
 * `diff <file>`: what `push <file>` would change in the live catalog, per skill, server and
 * expert. Exit code 0; with --exit-code, 1 when there are differences (like `git diff`).
 * @param {string[]} args @param {Record<string, unknown>} flags @param {import("../io.mjs").CliIo} io
 */
export async function diff(args, flags, io) {
  const [file] = args;
  if (!file) throw usageError("diff needs a file: `npx slipsnisse diff catalog.json`.");
  const local = parseCatalog(await readCatalogFile(io.cwd, file));
  if (!local.ok)
    throw new CliError(
      `${file} has ${local.problems.length} problem(s):\n${formatProblems(local.problems)}`,
      "Correct them first; `npx slipsnisse validate` lists them.",
    );
  const client = adminClient(flags, io);
  const live = parseCatalog(await withProgress(io, `Fetching the catalog from ${client.base}`, () => client.get("/catalog")));
  if (!live.ok) throw new CliError("The live catalog does not pass this CLI's checks.", "Update the CLI (git pull) so it matches the deployed Worker.");
  const lines = diffCatalogs(live.catalog, local.catalog);
  io.stdout.write(lines.length === 0 ? `No differences: ${file} matches the live catalog.\n` : `${lines.join("\n")}\n`);
  return lines.length > 0 && flags["exit-code"] ? 1 : 0;
}
