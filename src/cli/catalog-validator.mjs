// @ts-check
/**
 * The admin API's own catalog checks, from the bundle generated out of src/catalog (see
 * build-catalog-validator.mjs), so `validate` works offline with the API's messages.
 * @typedef {{ path: string, message: string, fix: string }} CatalogProblem
 * @typedef {{ skills: Record<string, Record<string, unknown>> }} Catalog
 * @typedef {{ ok: true, catalog: Catalog } | { ok: false, problems: CatalogProblem[] }} ParseResult
 */
import { formatProblems as format, parseCatalog as parse } from "../../bin/catalog-validator.mjs";

/** @param {unknown} input @returns {ParseResult} */
export function parseCatalog(input) {
  return /** @type {ParseResult} */ (parse(input));
}

/** @param {readonly CatalogProblem[]} problems @returns {string} */
export function formatProblems(problems) {
  return format(problems);
}
