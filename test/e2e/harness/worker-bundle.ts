import { mkdtemp, readdir, readFile, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { repoRoot, runWrangler } from "./wrangler-command";

/** The Worker as `wrangler deploy` would upload it, built once for a test run. */
export interface WorkerBundle {
  /** The entry module to run with `wrangler dev <entry> --no-bundle`. */
  entry: string;
  remove(): Promise<void>;
}

const ENTRY = "worker.js";
/** What `wrangler deploy --dry-run --outdir` writes beside the entry besides the text modules. */
const EXPECTED = new Set(["index.js", "index.js.map", "README.md"]);
const TEXT_IMPORT = /^import (\w+) from "\.\/([^"/]+\.md)";$/gm;

/**
 * Bundles this repository's Worker once (`wrangler deploy --dry-run --outdir`: the same esbuild
 * run `wrangler dev` does at every start, about 1.5 s of CPU each, minus dev's middleware) for
 * every `wrangler dev` of a test run to start from (`usePrebuiltWorker`).
 *
 * The `.md` prompt and docs texts are Text modules (wrangler.toml's [[rules]]): the bundle
 * imports them as files beside it. `wrangler dev --no-bundle` only finds such files through
 * `find_additional_modules` in a wrangler.toml, which would have to sit in the project directory
 * (its `.dev.vars` is read from there); so they are inlined instead, each as the string its
 * import gave, declared on the bundle's first line so that every other line, and the source map
 * that points into them, stays where it was.
 */
export async function buildWorkerBundle(): Promise<WorkerBundle> {
  const dir = await mkdtemp(join(tmpdir(), "slipsnisse-worker-bundle-"));
  const remove = () => rm(dir, { recursive: true, force: true });
  try {
    const built = await runWrangler(["deploy", "--dry-run", "--outdir", dir], { timeoutMs: 120_000 });
    if (built.code !== 0) throw new Error(`wrangler deploy --dry-run failed (exit ${built.code}):\n${built.output.slice(-3000)}`);
    const source = await readFile(join(dir, "index.js"), "utf8");
    const texts = new Map<string, string>();
    for (const [, , file] of source.matchAll(TEXT_IMPORT)) if (file !== undefined) texts.set(file, await readFile(join(dir, file), "utf8"));
    const declarations: string[] = [];
    const inlined = source.replace(TEXT_IMPORT, (_line, name: string, file: string) => {
      declarations.push(`var ${name} = ${JSON.stringify(texts.get(file))};`);
      return "";
    });
    const left = /^import [^\n]* from "\.{1,2}\/[^"]*";$/m.exec(inlined);
    if (left !== null) throw new Error(`The Worker bundle imports a module this harness does not inline: ${left[0]}`);
    const unknown = (await readdir(dir)).filter((name) => !EXPECTED.has(name) && !texts.has(name));
    if (unknown.length > 0) throw new Error(`wrangler's bundle holds modules this harness does not inline: ${unknown.join(", ")}`);
    await writeFile(join(dir, ENTRY), declarations.join("") + inlined);
    return { entry: join(dir, ENTRY), remove };
  } catch (error) {
    await remove();
    throw error;
  }
}

let prebuiltEntry: (() => Promise<string>) | undefined;

/**
 * Makes every later `startWranglerDev` of this process (in this repository's project) start
 * from the bundle `entry` gives instead of bundling again. The e2e global setup builds it and
 * calls this; its test workers call it with the wait for what the setup publishes
 * (test/e2e/harness/e2e-setup.ts).
 */
export function usePrebuiltWorker(entry: (() => Promise<string>) | undefined): void {
  prebuiltEntry = entry;
}

/**
 * The prebuilt entry if there is one and `projectDir` runs this repository's Worker (its
 * wrangler.toml and src are this repository's, as in the linked copies that add `.dev.vars`).
 */
export async function prebuiltWorkerFor(projectDir: string): Promise<string | undefined> {
  if (prebuiltEntry === undefined) return undefined;
  for (const entry of ["wrangler.toml", "src"]) {
    const [theirs, ours] = await Promise.all([realpath(join(projectDir, entry)).catch(() => undefined), realpath(join(repoRoot, entry))]);
    if (theirs !== ours) return undefined;
  }
  return prebuiltEntry();
}
