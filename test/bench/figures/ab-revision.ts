import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { loadCatalog } from "../../e2e/harness/catalog-admin";
import { startWranglerDev } from "../../e2e/harness/wrangler-dev";
import { callExpert, createConnector, type BenchContext, type Figure } from "../bench-context";
import { snapshotRevision } from "../profile/git-snapshot";
import { loadNow } from "../results-report";
import { interleavedPairs, round, summarize } from "../sample-stats";
import { workerdCpuMs } from "./cpu-per-call";

/**
 * AB: the working tree (B, the bench's own wrangler dev) against a committed revision (A, a
 * second wrangler dev from `git archive`), expert calls interleaved pair by pair so the shared
 * machine's drift hits both arms alike. `--ab=<rev>` (default HEAD). Reports B/A of p50 and mean.
 */
export async function measureAgainstRevision(ctx: BenchContext, rev: string): Promise<Figure[]> {
  const snapshot = await snapshotRevision(rev);
  // BENCH_AB_A_TOML: top-level wrangler.toml keys for arm A only (e.g. "keep_names = false"), to
  // measure a build setting without editing the shared wrangler.toml.
  const extraToml = process.env.BENCH_AB_A_TOML;
  if (extraToml) {
    const toml = join(snapshot.dir, "wrangler.toml");
    await writeFile(toml, `${extraToml}\n${await readFile(toml, "utf8")}`);
  }
  const base = await startWranglerDev({ readyTimeoutMs: 60_000, projectDir: snapshot.dir }).catch(async (error: unknown) => {
    await snapshot.remove();
    throw error;
  });
  try {
    await loadCatalog(base.baseUrl, ctx.catalog);
    const a = await createConnector(base.baseUrl, ctx.kind)("/mcp");
    const b = await ctx.connect("/mcp");
    const limitedA = await createConnector(base.baseUrl, ctx.kind)("/s/limited/mcp");
    const limitedB = await ctx.connect("/s/limited/mcp");
    const figures: Figure[] = [];
    try {
      const samples = Number(process.env.BENCH_AB_SAMPLES ?? 150);
      const abOnly = process.env.BENCH_AB_ONLY?.split(",");
      for (const [expert, query, share, limited] of [
        ["no_tools", "hi", 1, false],
        ["one_call", "go", 1, false],
        ["many_steps", "steps=20", 3, false],
        ["no_tools", "hi", 1, true],
      ] as const) {
        // BENCH_AB_ONLY=no_tools,limited: only these rows (one path's experiment in a third of the time).
        if (abOnly && !abOnly.includes(limited ? "limited" : expert)) continue;
        const [armA, armB] = limited ? [limitedA, limitedB] : [a, b];
        // Each arm's workerd works only while its own call runs, so its CPU over the whole
        // interleaved loop, divided by its calls, is its CPU per call (robust on a loaded machine).
        const cpuBefore = await Promise.all([workerdCpuMs(base.pgid), workerdCpuMs(ctx.dev.pgid)]);
        const times = await interleavedPairs(
          () => callExpert(armA, expert, query),
          () => callExpert(armB, expert, query),
          { samples: Math.ceil(samples / share), warmup: 10, maxMs: 120_000 },
        );
        const cpuAfter = await Promise.all([workerdCpuMs(base.pgid), workerdCpuMs(ctx.dev.pgid)]);
        const [sa, sb] = [summarize(times.a), summarize(times.b)];
        const warm = 10;
        const cpuA = (cpuAfter[0].worker - cpuBefore[0].worker) / (sa.n + warm);
        const cpuB = (cpuAfter[1].worker - cpuBefore[1].worker) / (sb.n + warm);
        figures.push({
          id: `AB ${limited ? "limited " : ""}${expert} vs ${rev.slice(0, 7)}`,
          title: `working tree / ${rev}, ${limited ? "skill with per-user and skill-wide limits, " : ""}${expert}(${query}) expert call (interleaved, n=${sa.n})`,
          value:
            `p50 ${round(sb.p50 / sa.p50, 3)}x (${round(sb.p50)} vs ${round(sa.p50)} ms), mean ${round(sb.mean / sa.mean, 3)}x; ` +
            `CPU ${round(cpuB / cpuA, 3)}x (${round(cpuB, 2)} vs ${round(cpuA, 2)} ms per call; load ${loadNow()})`,
          target: "(A/B)",
          pass: null,
          details: { base: sa, tree: sb, rev, cpuMsPerCall: { base: cpuA, tree: cpuB } },
        });
      }
    } finally {
      await Promise.allSettled([a.close(), b.close(), limitedA.close(), limitedB.close()]);
    }
    return figures;
  } finally {
    await base.stop();
    await snapshot.remove();
  }
}
