import { callExpert, type BenchContext, type Figure } from "../bench-context";
import { interleavedPairs, round, sampleTimes, summarize, type Summary } from "../sample-stats";

/** What one zero-latency model call costs on this machine: a chat request from Node to the fake. */
async function modelRoundTrip(ctx: BenchContext): Promise<Summary> {
  const body = JSON.stringify({ model: "no-tools", messages: [{ role: "user", content: "hi" }] });
  const times = await sampleTimes(
    async () => {
      const response = await fetch(`${ctx.fake.baseURL}/chat/completions`, { method: "POST", body, headers: { "content-type": "application/json" } });
      await response.arrayBuffer();
    },
    { samples: 100, warmup: 10, maxMs: 20_000 },
  );
  return summarize(times);
}

/**
 * M2: end-to-end time of an expert call minus model time minus downstream time, for 1 and for
 * 20 steps (each step one echo call). Model time = steps+1 zero-latency model round trips as
 * measured from Node; downstream time = steps direct echo calls (M1's direct arm).
 */
export async function measureFixedCost(ctx: BenchContext, directEcho: Summary): Promise<Figure[]> {
  const worker = await ctx.connect("/mcp");
  try {
    const model = await modelRoundTrip(ctx);
    const sizes = { ...ctx.sizes, samples: Math.max(10, Math.floor(ctx.sizes.samples / 4)) };
    const times = await interleavedPairs(
      () => callExpert(worker, "many_steps", "steps=1"),
      () => callExpert(worker, "many_steps", "steps=20"),
      sizes,
    );
    const noTools = summarize(await sampleTimes(() => callExpert(worker, "no_tools", "hi"), sizes));
    const one = summarize(times.a);
    const twenty = summarize(times.b);
    const fixed = (total: number, steps: number) => total - (steps + 1) * model.p50 - steps * directEcho.p50;
    const fixed1 = fixed(one.p50, 1);
    const fixed20 = fixed(twenty.p50, 20);
    const perStep = (fixed20 - fixed1) / 19;
    const perCall = fixed1 - perStep;
    const details = { oneStep: one, twentySteps: twenty, noTools, modelRoundTrip: model, directEcho, fixed1, fixed20 };
    const note =
      `per call = fixed(1) - per step; fixed(n) = e2e p50 - (n+1) x ${round(model.p50)} ms model round trip - n x ${round(directEcho.p50)} ms direct echo. ` +
      `An expert with no tool call takes ${round(noTools.p50)} ms end to end (one model call): that is the MCP surface + Durable Object hop + one model fetch from workerd.`;
    return [
      { id: "M2 per call", title: "fixed cost per expert call", value: `${round(perCall)} ms`, target: "<= 3 ms", pass: perCall <= 3, note, details },
      {
        id: "M2 per step",
        title: "fixed cost per step",
        value: `${round(perStep)} ms (1 step ${round(one.p50)} ms, 20 steps ${round(twenty.p50)} ms e2e p50)`,
        target: "<= 0.5 ms",
        pass: perStep <= 0.5,
        details,
      },
    ];
  } finally {
    await worker.close();
  }
}
