import { callExpert, callInLanes, type BenchContext, type Figure } from "../bench-context";
import type { McpTestClient } from "../../e2e/harness/mcp-clients";
import { round, summarize } from "../sample-stats";

const CONCURRENCY = 8;

/** Expert calls per second at concurrency 8, each a one-tool-call expert with the zero-latency model. */
export async function measureThroughput(ctx: BenchContext): Promise<Figure[]> {
  const clients: McpTestClient[] = [];
  try {
    for (let i = 0; i < CONCURRENCY; i++) clients.push(await ctx.connect("/mcp"));
    await Promise.all(clients.map((client) => callExpert(client, "one_call", "go")));
    const total = Math.max(CONCURRENCY * 10, ctx.sizes.samples * 2);
    const latencies: number[] = [];
    const deadline = performance.now() + ctx.sizes.maxMs;
    const started = performance.now();
    await callInLanes(
      clients,
      total,
      async (client) => {
        const t = performance.now();
        await callExpert(client, "one_call", "go");
        latencies.push(performance.now() - t);
      },
      deadline,
    );
    const elapsed = (performance.now() - started) / 1000;
    const perSecond = latencies.length / elapsed;
    const lat = summarize(latencies);
    return [
      {
        id: "Throughput",
        title: `expert calls per second at concurrency ${CONCURRENCY} (one downstream call each)`,
        value: `${round(perSecond, 1)} calls/s (${latencies.length} calls; latency p50 ${round(lat.p50)} ms, p99 ${round(lat.p99)} ms)`,
        target: "(reported)",
        pass: null,
        note: "All calls come from one user and skill, so they share one ExpertSession Durable Object: one thread, interleaving only at I/O.",
        details: { calls: latencies.length, seconds: elapsed, latency: lat },
      },
    ];
  } finally {
    await Promise.allSettled(clients.map((client) => client.close()));
  }
}
