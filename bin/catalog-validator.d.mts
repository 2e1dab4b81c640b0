// Types of the generated bundle: exactly the source modules it is built from.
export { parseCatalog } from "../src/catalog/parse-catalog";
export { formatProblems } from "../src/catalog/catalog-problems";
