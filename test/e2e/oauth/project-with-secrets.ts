import { randomBytes } from "node:crypto";
import { mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { repoRoot } from "../harness/wrangler-command";

const LINKED = ["src", "migrations", "wrangler.toml", "package.json", "tsconfig.json", "node_modules"];

export interface ProjectWithSecrets {
  dir: string;
  adminToken: string;
  remove(): Promise<void>;
}

/**
 * This repository, linked into a temp dir that also holds a `.dev.vars` with a fresh
 * ADMIN_TOKEN. Secrets must not go through `--var` (wrangler prints var values at startup);
 * `wrangler dev` reads `.dev.vars` from the project dir and prints its values as hidden.
 */
export async function projectWithSecrets(extra: Record<string, string> = {}): Promise<ProjectWithSecrets> {
  const dir = await mkdtemp(join(tmpdir(), "slipsnisse-oauth-e2e-"));
  for (const entry of LINKED) await symlink(join(repoRoot, entry), join(dir, entry));
  const adminToken = randomBytes(24).toString("base64url");
  const lines = Object.entries({ ADMIN_TOKEN: adminToken, ...extra }).map(([name, value]) => `${name}=${value}`);
  await writeFile(join(dir, ".dev.vars"), `${lines.join("\n")}\n`, { mode: 0o600 });
  return { dir, adminToken, remove: () => rm(dir, { recursive: true, force: true }) };
}
