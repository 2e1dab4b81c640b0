// @ts-check
import { readFile } from "node:fs/promises";
import { resolve } from "node:path";
import { CliError } from "./cli-error.mjs";

/**
 * Reads a catalog (or seed config) file as JSON. Its shape is checked by the validator.
 * @param {string} cwd
 * @param {string} file
 * @returns {Promise<unknown>}
 */
export async function readCatalogFile(cwd, file) {
  const path = resolve(cwd, file);
  let text;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    const code = /** @type {{ code?: string }} */ (error).code;
    if (code === "ENOENT")
      throw new CliError(`There is no file ${path}.`, "Check the path. `npx slipsnisse pull catalog.json` writes the live catalog to a file.");
    throw new CliError(`Cannot read ${path} (${code ?? String(error)}).`, "Check that the file exists and that you may read it.");
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new CliError(
      `${path} is not valid JSON: ${error instanceof Error ? error.message : String(error)}.`,
      "Fix the syntax at the position shown (a trailing comma or a missing quote, most often).",
    );
  }
}
