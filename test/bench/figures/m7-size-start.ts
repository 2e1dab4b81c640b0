import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { runWrangler } from "../../e2e/harness/wrangler-command";
import type { BenchContext, Figure } from "../bench-context";
import { round } from "../sample-stats";
import { profileHotSpots } from "../startup-profile";

const FREE_PLAN_LIMIT = 3 * 1024 * 1024;
const TARGET = 1024 * 1024;

async function gzipSizeOfDir(dir: string): Promise<{ raw: number; gzip: number; files: number }> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  let raw = 0;
  let gzip = 0;
  let files = 0;
  for (const entry of entries) {
    if (!entry.isFile() || entry.name.endsWith(".map")) continue;
    const bytes = await readFile(join(entry.parentPath, entry.name));
    raw += bytes.length;
    gzip += gzipSync(bytes, { level: 9 }).length;
    files += 1;
  }
  return { raw, gzip, files };
}

/**
 * M7: gzip size of `wrangler deploy --dry-run` output against the free plan's 3 MB, and the
 * Worker's startup (top-level evaluation) time from `wrangler check startup`, with its hot spots.
 */
export async function measureSizeAndStart(ctx: BenchContext): Promise<Figure[]> {
  const dir = await mkdtemp(join(tmpdir(), "slipsnisse-bench-dist-"));
  try {
    const deploy = await runWrangler(["deploy", "--dry-run", "--outdir", join(dir, "dist")], { cwd: ctx.projectDir, timeoutMs: 120_000 });
    if (deploy.code !== 0) throw new Error(`wrangler deploy --dry-run failed:\n${deploy.output.slice(-2000)}`);
    const size = await gzipSizeOfDir(join(dir, "dist"));
    const profilePath = join(dir, "startup.cpuprofile");
    const check = await runWrangler(["check", "startup", "--outfile", profilePath], { cwd: ctx.projectDir, timeoutMs: 120_000 });
    const active = /Active:\s*([\d.]+)\s*ms/.exec(check.output)?.[1];
    const startupMs = active === undefined ? Number.NaN : Number(active);
    const hotSpots = check.code === 0 ? await profileHotSpots(profilePath) : [];
    return [
      {
        id: "M7 size",
        title: "gzip size of wrangler deploy --dry-run output",
        value: `${round(size.gzip / 1024, 0)} KiB gzip (${round(size.raw / 1024, 0)} KiB raw, ${size.files} files; ${round((100 * size.gzip) / FREE_PLAN_LIMIT, 0)}% of the 3 MB free plan)`,
        target: "<= 1 MB gzip",
        pass: size.gzip <= TARGET,
        details: size,
      },
      {
        id: "M7 start",
        title: "Worker startup (top-level evaluation, wrangler check startup, local CPU)",
        value: Number.isFinite(startupMs) ? `${round(startupMs, 1)} ms active CPU` : "not measured",
        target: "(reported; the platform limit is 1 s)",
        pass: null,
        note:
          `wrangler dev was ready ${round(ctx.dev.startupMs, 0)} ms after spawn. Startup hot spots: ` +
          hotSpots
            .slice(0, 5)
            .map((h) => `${h.frame} ${round(h.selfMs, 1)} ms`)
            .join("; "),
        details: { startupMs, devReadyMs: ctx.dev.startupMs, hotSpots, checkOutputTail: check.code === 0 ? undefined : check.output.slice(-1500) },
      },
    ];
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
