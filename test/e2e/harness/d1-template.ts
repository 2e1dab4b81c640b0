import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { cp, mkdtemp, readdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { repoRoot, runWrangler } from "./wrangler-command";

const COMPLETE = ".migrations-applied";

/**
 * What decides the migrated local D1 file: the migrations, the wrangler.toml that names the
 * database (its id is the file's name), and the wrangler that wrote it.
 */
async function templateKey(projectDir: string): Promise<string> {
  const hash = createHash("sha256");
  hash.update(await readFile(join(projectDir, "wrangler.toml")));
  hash.update(await readFile(join(repoRoot, "node_modules/wrangler/package.json")));
  const migrationsDir = join(projectDir, "migrations");
  for (const name of (await readdir(migrationsDir)).sort()) {
    hash.update(name);
    hash.update(await readFile(join(migrationsDir, name)));
  }
  return hash.digest("hex").slice(0, 20);
}

async function applyMigrations(projectDir: string, persistDir: string): Promise<void> {
  const args = ["d1", "migrations", "apply", "DB", "--local", "--persist-to", persistDir];
  const result = await runWrangler(args, { cwd: projectDir });
  if (result.code !== 0) {
    throw new Error(`wrangler d1 migrations apply failed (exit ${result.code}):\n${result.output.slice(-3000)}`);
  }
}

/**
 * Fills `persistDir` with a local D1 that has every migration applied. `wrangler d1 migrations
 * apply` runs once per distinct set of migrations (a wrangler process: 3 s quiet, 10 s and more
 * on a loaded machine); every later start copies its result, which is the same bytes. The copy
 * is kept in the OS temp dir under a content hash, so a changed migration makes a new one, and
 * concurrent runs race safely (the first complete rename wins, the others use it).
 */
export async function migratedD1(projectDir: string, persistDir: string): Promise<void> {
  const template = join(tmpdir(), `slipsnisse-d1-migrated-${await templateKey(projectDir)}`);
  if (!existsSync(join(template, COMPLETE))) {
    const staging = await mkdtemp(join(tmpdir(), "slipsnisse-d1-staging-"));
    try {
      await applyMigrations(projectDir, staging);
      await writeFile(join(staging, COMPLETE), "");
      await rename(staging, template).catch((error: NodeJS.ErrnoException) => {
        // Another run finished first; its template is as good as this one.
        if (error.code !== "ENOTEMPTY" && error.code !== "EEXIST") throw error;
      });
    } finally {
      await rm(staging, { recursive: true, force: true });
    }
  }
  await cp(template, persistDir, { recursive: true, filter: (source) => !source.endsWith(COMPLETE) });
}
