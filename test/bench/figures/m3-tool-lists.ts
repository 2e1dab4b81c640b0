import type { BenchContext, Figure } from "../bench-context";
import { round, sampleTimes, summarize } from "../sample-stats";

/**
 * M3: tools/list of the `wide` skill warm (repeated on one connection) versus cold (right after
 * a changed catalog was loaded, so the compiled skill and any downstream list must be fetched
 * again). Counts the downstream tools/list requests the cold lists caused.
 */
export async function measureToolLists(ctx: BenchContext): Promise<Figure[]> {
  const client = await ctx.connect("/s/wide/mcp");
  try {
    const warm = summarize(await sampleTimes(() => client.listTools(), { ...ctx.sizes, samples: ctx.sizes.samples * 2 }));
    const coldSamples: number[] = [];
    const downstreamBefore = ctx.wide.reduce((sum, s) => sum + s.stats().toolsList, 0);
    const rounds = Math.max(5, Math.min(20, Math.floor(ctx.sizes.samples / 10)));
    for (let i = 0; i < rounds; i++) {
      await ctx.reloadCatalog(i + 1);
      const started = performance.now();
      await client.listTools();
      coldSamples.push(performance.now() - started);
    }
    const downstreamLists = ctx.wide.reduce((sum, s) => sum + s.stats().toolsList, 0) - downstreamBefore;
    await ctx.reloadCatalog(0);
    const cold = summarize(coldSamples);
    const ratio = cold.p50 / warm.p50;
    const note =
      `cold = first tools/list after a changed catalog was PUT; it caused ${downstreamLists} downstream tools/list requests over ${rounds} cold lists ` +
      `(0 means the surface lists experts from the compiled catalog without asking downstream servers).`;
    return [
      { id: "M3 warm", title: "tools/list warm, end to end", value: `${round(warm.p50)} ms p50 (p99 ${round(warm.p99)})`, target: "<= 3 ms", pass: warm.p50 <= 3, details: { warm } },
      { id: "M3 cold/warm", title: "tools/list cold / warm", value: `${round(ratio, 1)}x (cold p50 ${round(cold.p50)} ms)`, target: ">= 50x", pass: ratio >= 50, note, details: { cold, downstreamLists } },
    ];
  } finally {
    await client.close();
  }
}
