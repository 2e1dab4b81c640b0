import { loadCatalog } from "../../e2e/harness/catalog-admin";
import { callExpert, type BenchContext, type Figure } from "../bench-context";
import { round, summarize } from "../sample-stats";

async function healthz(baseUrl: string): Promise<void> {
  const response = await fetch(`${baseUrl}/healthz`);
  await response.arrayBuffer();
}

/** The `wide` skill with every server's config changed (call_timeout_ms): new warm pool, new KV tool-list keys. */
function wideWithFreshServers(ctx: BenchContext, generation: number) {
  const wide = ctx.catalog.skills.wide;
  if (!wide) throw new Error("the bench catalog has no `wide` skill");
  const servers = Object.fromEntries(Object.entries(wide.servers ?? {}).map(([id, server]) => [id, { ...server, call_timeout_ms: 30_000 + generation }]));
  return { ...ctx.catalog, skills: { ...ctx.catalog.skills, wide: { ...wide, servers } } };
}

/**
 * M3, in two parts, because the orchestrator's tools/list never asks downstream servers (the
 * experts come from the compiled catalog), so the issue's "cold = downstream lists fetched"
 * happens at an expert's first call instead:
 * - tools/list warm on one connection, interleaved with GET /healthz (F0, wrangler dev's floor),
 *   so its cost above the floor is measured in the same loop;
 * - an expert of `wide` (two servers, six whitelisted tools each, zero-latency model that calls
 *   none) on its first call after its servers' configuration changed (connect, initialize,
 *   tools/list, pin check, KV write per server) against the same call warm.
 */
export async function measureToolLists(ctx: BenchContext): Promise<Figure[]> {
  const client = await ctx.connect("/s/wide/mcp");
  try {
    const warm: number[] = [];
    const floor: number[] = [];
    const samples = ctx.sizes.samples * 2;
    for (let i = 0; i < ctx.sizes.warmup; i++) await Promise.all([client.listTools(), healthz(ctx.dev.baseUrl)]);
    const deadline = performance.now() + ctx.sizes.maxMs;
    for (let i = 0; i < samples && performance.now() < deadline; i++) {
      let t = performance.now();
      await client.listTools();
      warm.push(performance.now() - t);
      t = performance.now();
      await healthz(ctx.dev.baseUrl);
      floor.push(performance.now() - t);
    }
    const w = summarize(warm);
    const f = summarize(floor);

    const cold: number[] = [];
    const hot: number[] = [];
    const listsBefore = ctx.wide.reduce((sum, s) => sum + s.stats().toolsList, 0);
    const rounds = Math.max(5, Math.min(20, Math.floor(ctx.sizes.samples / 10)));
    for (let i = 0; i < rounds; i++) {
      await loadCatalog(ctx.dev.baseUrl, wideWithFreshServers(ctx, i + 1));
      let t = performance.now();
      await callExpert(client, "triage_issue", "who owns the login bug?");
      cold.push(performance.now() - t);
      for (let k = 0; k < 3; k++) {
        t = performance.now();
        await callExpert(client, "triage_issue", "who owns the login bug?");
        if (k > 0) hot.push(performance.now() - t);
      }
    }
    const downstreamLists = ctx.wide.reduce((sum, s) => sum + s.stats().toolsList, 0) - listsBefore;
    await loadCatalog(ctx.dev.baseUrl, ctx.catalog);
    const c = summarize(cold);
    const h = summarize(hot);
    const ratio = c.p50 / h.p50;
    const note =
      `cold = triage_issue's first call after its two servers' config changed (${downstreamLists} downstream tools/list requests over ${rounds} cold calls); ` +
      `warm = the same call with the session's pool and tool lists warm. The orchestrator's tools/list itself never reaches downstream servers.`;
    return [
      {
        id: "M3 warm",
        title: "orchestrator tools/list warm, end to end (and above GET /healthz, F0, in the same loop)",
        value: `${round(w.p50)} ms p50 (p99 ${round(w.p99)}); ${round(w.p50 - f.p50)} ms above the ${round(f.p50)} ms floor`,
        target: "<= 3 ms",
        pass: w.p50 <= 3,
        details: { warm: w, healthz: f },
      },
      {
        id: "M3 cold/warm",
        title: "expert call with downstream tool lists fetched (first call) / warm",
        value: `${round(ratio, 2)}x (cold p50 ${round(c.p50)} ms, warm p50 ${round(h.p50)} ms; cold - warm ${round(c.p50 - h.p50)} ms)`,
        target: ">= 50x",
        pass: ratio >= 50,
        note,
        details: { cold: c, warm: h, downstreamLists },
      },
    ];
  } finally {
    await client.close();
  }
}
