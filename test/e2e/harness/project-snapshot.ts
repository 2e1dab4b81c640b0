import { cp, mkdtemp, rm, symlink } from "node:fs/promises";
import { existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { repoRoot } from "./wrangler-command";

/** What `wrangler dev` / `wrangler deploy` read from the project. */
const PROJECT_ENTRIES = [
  "src",
  "migrations",
  "wrangler.toml",
  "package.json",
  "tsconfig.json",
  "worker-configuration.d.ts",
  // The demo docs server imports the README and docs/ as text modules.
  "README.md",
  "docs",
  // `npm start` itself (start.mjs and the demo catalog it loads).
  "scripts",
];

export interface ProjectSnapshot {
  dir: string;
  remove(): Promise<void>;
}

/**
 * A frozen copy of the Worker's sources (node_modules linked, not copied). `wrangler dev` watches
 * its project and rebuilds on every change; a long run (the benchmark) against a working tree
 * that others edit would otherwise measure half-built reloads.
 */
export async function snapshotProject(): Promise<ProjectSnapshot> {
  const dir = await mkdtemp(join(tmpdir(), "slipsnisse-snapshot-"));
  for (const entry of PROJECT_ENTRIES) {
    const from = join(repoRoot, entry);
    if (existsSync(from)) await cp(from, join(dir, entry), { recursive: true });
  }
  await symlink(join(repoRoot, "node_modules"), join(dir, "node_modules"), "dir");
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
}
