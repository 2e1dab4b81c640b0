import { callExpert, type BenchContext, type Figure } from "../bench-context";
import { interleavedPairs, round, summarize } from "../sample-stats";

const TOOL_MS = 50;

/**
 * M4: one step with six 50 ms downstream calls. The same expert with six 0 ms calls is the
 * interleaved baseline, so (wall(6 x 50) - wall(6 x 0)) / 50 ms is what the step's wait costs:
 * 1.0 when the six run fully in parallel, 6 when they run one after another.
 */
export async function measureFanOut(ctx: BenchContext): Promise<Figure[]> {
  const worker = await ctx.connect("/mcp");
  try {
    const sizes = { ...ctx.sizes, samples: Math.max(10, Math.floor(ctx.sizes.samples / 4)) };
    const times = await interleavedPairs(
      () => callExpert(worker, "fan_out", `ms=${TOOL_MS}`),
      () => callExpert(worker, "fan_out", "ms=0"),
      sizes,
    );
    const slow = summarize(times.a);
    const instant = summarize(times.b);
    const ratio = (slow.p50 - instant.p50) / TOOL_MS;
    return [
      {
        id: "M4",
        title: "parallel fan-out, 6 x 50 ms in one step (wall / 50 ms)",
        value: `${round(ratio)} (6x50 ms ${round(slow.p50)} ms vs 6x0 ms ${round(instant.p50)} ms p50)`,
        target: "<= 1.15",
        pass: ratio <= 1.15,
        details: { sixBy50: slow, sixBy0: instant },
      },
    ];
  } finally {
    await worker.close();
  }
}
