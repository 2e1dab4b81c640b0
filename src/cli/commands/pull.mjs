// @ts-check
import { writeFile } from "node:fs/promises";
import { resolve } from "node:path";
import { adminClient } from "../admin-client.mjs";
import { withProgress } from "../progress.mjs";

/**
 * `pull [file]`: the live catalog as JSON (defaults filled in), to a file or stdout. The result
 * can be edited and pushed back as is.
 * @param {string[]} args @param {Record<string, unknown>} flags @param {import("../io.mjs").CliIo} io
 */
export async function pull(args, flags, io) {
  const [file] = args;
  const client = adminClient(flags, io);
  const catalog = await withProgress(io, `Fetching the catalog from ${client.base}`, () => client.get("/catalog"));
  const text = `${JSON.stringify(catalog, null, 2)}\n`;
  if (!file) {
    io.stdout.write(text);
    return 0;
  }
  await writeFile(resolve(io.cwd, file), text);
  const skills = Object.keys(/** @type {Record<string, unknown>} */ (catalog.skills ?? {}));
  io.stderr.write(`Wrote ${file}: ${skills.length} skill(s): ${skills.join(", ")}\n`);
  return 0;
}
