import { z } from "zod";
import { META_USAGE_KEY } from "../bench-meta";
import { callExpert, type BenchContext, type Figure } from "../bench-context";
import { round, summarize } from "../sample-stats";

const usageSchema = z.looseObject({ elapsedMs: z.number(), steps: z.number(), toolCalls: z.number() });

/**
 * B: where an expert call's time goes, from the run's own clock (`_meta` usage.elapsedMs, the
 * runner inside the Durable Object: toolset, model calls, downstream calls) against the
 * client's end-to-end time; the difference is the MCP surface, the Durable Object hop and the
 * session's bookkeeping (skill lookup, model resolution, run record writes).
 */
export async function measureExpertBreakdown(ctx: BenchContext): Promise<Figure[]> {
  const worker = await ctx.connect("/mcp");
  try {
    const figures: Figure[] = [];
    for (const [expert, query, label] of [
      ["no_tools", "hi", "no tool call"],
      ["one_call", "go", "one echo call"],
    ] as const) {
      const e2e: number[] = [];
      const runner: number[] = [];
      const count = Math.max(10, Math.floor(ctx.sizes.samples / 4));
      for (let i = 0; i < ctx.sizes.warmup + count; i++) {
        const started = performance.now();
        const result = await callExpert(worker, expert, query);
        const elapsed = performance.now() - started;
        const usage = usageSchema.safeParse(result._meta?.[META_USAGE_KEY]);
        if (!usage.success) throw new Error(`no usage in _meta["${META_USAGE_KEY}"] of ${expert}'s result`);
        if (i < ctx.sizes.warmup) continue;
        e2e.push(elapsed);
        runner.push(usage.data.elapsedMs);
      }
      const total = summarize(e2e);
      const inRunner = summarize(runner);
      figures.push({
        id: `B ${expert}`,
        title: `breakdown of an expert call with ${label}`,
        value: `e2e ${round(total.p50)} ms = runner ${round(inRunner.p50)} ms + surface/DO/session ${round(total.p50 - inRunner.p50)} ms (p50)`,
        target: "(breakdown)",
        pass: null,
        details: { e2e: total, runner: inRunner },
      });
    }
    return figures;
  } finally {
    await worker.close();
  }
}
