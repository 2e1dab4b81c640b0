/**
 * What `slipsnisse validate` runs offline: the very checks the admin API runs, bundled into
 * bin/catalog-validator.mjs (with zod) so the CLI needs no build step and no TypeScript loader.
 * Regenerate with `npx node src/cli/build-catalog-validator.mjs`; test/unit/cli fails when stale.
 */
export { parseCatalog } from "../catalog/parse-catalog";
export { formatProblems } from "../catalog/catalog-problems";
