import { readFixtureStats, resetFixtureStats } from "../../fixtures/fixture-stats-client";
import { callExpert, type BenchContext, type Figure } from "../bench-context";

/** M5: downstream `initialize` + `server/discover` requests during 100 warm expert calls. */
export async function measureReinitialisation(ctx: BenchContext): Promise<Figure[]> {
  const worker = await ctx.connect("/mcp");
  try {
    for (let i = 0; i < 5; i++) await callExpert(worker, "one_call", "go");
    await resetFixtureStats(ctx.echoBase);
    for (let i = 0; i < 100; i++) await callExpert(worker, "one_call", "go");
    const stats = await readFixtureStats(ctx.echoBase);
    const handshakes = stats.initialize + stats.discover;
    return [
      {
        id: "M5",
        title: "downstream initialize/discover per 100 warm expert calls",
        value: String(handshakes),
        target: "0",
        pass: handshakes === 0,
        details: { initialize: stats.initialize, discover: stats.discover, toolsList: stats.toolsList, calls: stats.calls, requests: stats.requests },
      },
    ];
  } finally {
    await worker.close();
  }
}
