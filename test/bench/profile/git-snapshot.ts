import { execFileSync } from "node:child_process";
import { mkdtemp, rm, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { repoRoot } from "../../e2e/harness/wrangler-command";
import type { ProjectSnapshot } from "../../e2e/harness/project-snapshot";

const ENTRIES = ["src", "migrations", "wrangler.toml", "package.json", "tsconfig.json", "worker-configuration.d.ts", "README.md", "docs"];

/** The Worker's sources as committed at `rev` (git archive), node_modules linked: the A arm of an A/B. */
export async function snapshotRevision(rev: string): Promise<ProjectSnapshot> {
  const dir = await mkdtemp(join(tmpdir(), "slipsnisse-rev-"));
  const tar = execFileSync("git", ["archive", "--format=tar", rev, "--", ...ENTRIES], { cwd: repoRoot, maxBuffer: 256 * 1024 * 1024 });
  execFileSync("tar", ["-x", "-C", dir], { input: tar });
  await symlink(join(repoRoot, "node_modules"), join(dir, "node_modules"), "dir");
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
}
