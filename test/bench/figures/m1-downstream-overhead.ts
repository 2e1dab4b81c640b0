import { callDirect, callExpert, type BenchContext, type Figure } from "../bench-context";
import { interleavedPairs, round, summarize, type Summary } from "../sample-stats";

export interface M1Result {
  figures: Figure[];
  /** The direct downstream echo call, reused by M2 as "downstream time". */
  directEcho: Summary;
}

/**
 * M1: one downstream call through an expert (the model asks for one tool call, then answers)
 * against the same MCP client calling the downstream server directly, in interleaved pairs.
 */
export async function measureDownstreamOverhead(ctx: BenchContext): Promise<M1Result> {
  const worker = await ctx.connect("/mcp");
  const direct = await ctx.connect(ctx.echoMcpUrl);
  try {
    const scenarios = [
      { label: "echo", target: 1.3, directCall: () => callDirect(direct, "echo", { text: "ping" }), expert: "one_call", query: "go" },
      { label: "20 ms tool", target: 1.05, directCall: () => callDirect(direct, "sleep", { ms: 20 }), expert: "one_call", query: "sleep=20" },
      // Route mode: one model call picks the echo call, whose result is the answer (no second model call).
      { label: "route", target: 1.3, directCall: () => callDirect(direct, "echo", { text: "ping" }), expert: "route_call", query: "go" },
    ];
    const figures: Figure[] = [];
    let directEcho: Summary | undefined;
    for (const scenario of scenarios) {
      const times = await interleavedPairs(scenario.directCall, () => callExpert(worker, scenario.expert, scenario.query), ctx.sizes);
      const a = summarize(times.a);
      const b = summarize(times.b);
      directEcho ??= a;
      const ratio = b.p50 / a.p50;
      figures.push({
        id: `M1 ${scenario.label}`,
        title: `downstream overhead, ${scenario.label} (p50 through ${scenario.expert} / direct)`,
        value: `${round(ratio)}x (p50 ${round(b.p50)} vs ${round(a.p50)} ms; p99 ${round(b.p99)} vs ${round(a.p99)} ms, ${round(b.p99 / a.p99)}x)`,
        target: `<= ${scenario.target}x p50`,
        pass: ratio <= scenario.target,
        note:
          "Through the expert the call also pays wrangler dev's HTTP floor (F0), the MCP surface, the Durable Object hop, the session's " +
          (scenario.expert === "route_call"
            ? "bookkeeping and one model round trip from workerd (a `route` expert: the model picks the tool and its result is the answer)."
            : "bookkeeping and two model round trips from workerd (ask for the tool, then answer); rows B split e2e into runner and the rest."),
        details: { direct: a, throughExpert: b, p50Ratio: ratio, p99Ratio: b.p99 / a.p99 },
      });
    }
    return { figures, directEcho: directEcho ?? summarize([]) };
  } finally {
    await Promise.allSettled([worker.close(), direct.close()]);
  }
}
