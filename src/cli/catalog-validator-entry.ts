/**
 * What `slipsnisse validate` runs offline: the very checks the admin API runs, bundled into
 * bin/catalog-validator.mjs (with zod) so the CLI runs under plain Node with no TypeScript loader.
 * `npm ci` builds it (the `prepare` script); after changing src/catalog run `npm run prepare`
 * (test/unit/cli fails when it is stale). Not committed: see docs/generated-files.md.
 */
export { parseCatalog } from "../catalog/parse-catalog";
export { formatProblems } from "../catalog/catalog-problems";
