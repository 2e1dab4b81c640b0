import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { loadCatalog } from "../../e2e/harness/catalog-admin";
import { startWranglerDev } from "../../e2e/harness/wrangler-dev";
import { callExpert, createConnector, type BenchContext, type Figure } from "../bench-context";
import { snapshotRevision } from "../profile/git-snapshot";
import { loadNow } from "../results-report";
import { interleavedPairs, round, summarize } from "../sample-stats";
import { workerdCpuMs } from "./cpu-per-call";

/** Blocks of the interleaved loop, each with its own CPU reading per arm. */
const AB_BLOCKS = 6;

/** The blocks' CPU ratios as "blocks 0.97 to 1.02x": the spread a change must clear to count. */
function blockSpread(ratios: readonly number[]): string {
  if (ratios.length < 2) return "one block";
  return `${ratios.length} blocks ${round(Math.min(...ratios), 3)} to ${round(Math.max(...ratios), 3)}x`;
}

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
        // The loop runs in AB_BLOCKS blocks, each with its own CPU reading, so the figure also says
        // how far the blocks' B/A ratios spread: a change smaller than that spread is not measured.
        const warm = 10;
        const perBlock = Math.max(1, Math.ceil(samples / share / AB_BLOCKS));
        const cpuBefore = await Promise.all([workerdCpuMs(base.pgid), workerdCpuMs(ctx.dev.pgid)]);
        const times = { a: [] as number[], b: [] as number[] };
        const blockRatios: number[] = [];
        const deadline = performance.now() + 120_000;
        for (let block = 0; block < AB_BLOCKS && performance.now() < deadline; block++) {
          const start = await Promise.all([workerdCpuMs(base.pgid), workerdCpuMs(ctx.dev.pgid)]);
          const pairs = await interleavedPairs(
            () => callExpert(armA, expert, query),
            () => callExpert(armB, expert, query),
            { samples: perBlock, warmup: block === 0 ? warm : 0, maxMs: Math.max(0, deadline - performance.now()) },
          );
          const end = await Promise.all([workerdCpuMs(base.pgid), workerdCpuMs(ctx.dev.pgid)]);
          times.a.push(...pairs.a);
          times.b.push(...pairs.b);
          const [calledA, calledB] = [pairs.a.length + (block === 0 ? warm : 0), pairs.b.length + (block === 0 ? warm : 0)];
          const [blockA, blockB] = [(end[0].worker - start[0].worker) / calledA, (end[1].worker - start[1].worker) / calledB];
          if (calledA > 0 && calledB > 0 && blockA > 0) blockRatios.push(blockB / blockA);
        }
        const cpuAfter = await Promise.all([workerdCpuMs(base.pgid), workerdCpuMs(ctx.dev.pgid)]);
        const [sa, sb] = [summarize(times.a), summarize(times.b)];
        const cpuA = (cpuAfter[0].worker - cpuBefore[0].worker) / (sa.n + warm);
        const cpuB = (cpuAfter[1].worker - cpuBefore[1].worker) / (sb.n + warm);
        const spread = blockSpread(blockRatios);
        figures.push({
          id: `AB ${limited ? "limited " : ""}${expert} vs ${rev.slice(0, 7)}`,
          title: `working tree / ${rev}, ${limited ? "skill with per-user and skill-wide limits, " : ""}${expert}(${query}) expert call (interleaved, n=${sa.n})`,
          value:
            `p50 ${round(sb.p50 / sa.p50, 3)}x (${round(sb.p50)} vs ${round(sa.p50)} ms), mean ${round(sb.mean / sa.mean, 3)}x; ` +
            `CPU ${round(cpuB / cpuA, 3)}x (${round(cpuB, 2)} vs ${round(cpuA, 2)} ms per call; ${spread}; load ${loadNow()})`,
          target: "(A/B)",
          pass: null,
          details: { base: sa, tree: sb, rev, cpuMsPerCall: { base: cpuA, tree: cpuB }, cpuBlockRatios: blockRatios },
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
