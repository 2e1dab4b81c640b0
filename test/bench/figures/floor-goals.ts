import { join } from "node:path";
import type { McpTestClient } from "../../e2e/harness/mcp-clients";
import { repoRoot } from "../../e2e/harness/wrangler-command";
import { startWranglerDev, type WranglerDev } from "../../e2e/harness/wrangler-dev";
import { callDirect, callExpert, createConnector, type BenchContext, type Figure } from "../bench-context";
import { loadNow } from "../results-report";
import { interleavedPairs, round, summarize, type Summary } from "../sample-stats";
import { workerdCpuMs } from "./cpu-per-call";

/**
 * Issue 21's goals, each as a ratio to the platform floor measured in the same run: the bench's
 * bare Worker (test/bench/floor/) under its own `wrangler dev` beside the product's, samples
 * interleaved pair by pair so a shared machine's drift hits both alike. Absolute figures are
 * given beside every ratio; only the ratios are comparable between machines and runs.
 */
export const GOALS = {
  toolsListRatio: 1.05,
  aboveFloorMs: 1.0,
  cpuRatio: 1.5,
  callsPerSecond: 150,
} as const;

const CONCURRENCY = 8;
/** Tool steps of each CPU scenario → the fetches the floor makes for the same work: (steps + 1) model calls and `steps` tool calls. */
const CPU_SCENARIOS = [
  { toolSteps: 0, expert: "no_tools", query: "hi" },
  { toolSteps: 1, expert: "one_call", query: "go" },
  { toolSteps: 5, expert: "many_steps", query: "steps=5" },
] as const;

function floorEcho(client: McpTestClient, fetches: number): Promise<unknown> {
  return callDirect(client, "echo", { text: "ping", fetches });
}

async function startFloor(ctx: BenchContext): Promise<WranglerDev> {
  return startWranglerDev({
    readyTimeoutMs: 60_000,
    projectDir: join(repoRoot, "test/bench/floor"),
    migrations: false,
    vars: { FLOOR_FETCH_URL: ctx.fake.baseURL },
  });
}

function latencyFigure(id: string, title: string, product: Summary, floor: Summary, floorName: string): Figure {
  const above = product.p50 - floor.p50;
  return {
    id,
    title,
    value: `+${round(above)} ms above floor p50 (${round(product.p50)} vs ${round(floor.p50)} ms; ${round(product.p50 / floor.p50, 3)}x; p99 ${round(product.p99)} vs ${round(floor.p99)} ms)`,
    target: `≤ +${GOALS.aboveFloorMs} ms above ${floorName}`,
    pass: above <= GOALS.aboveFloorMs,
    details: { product, floor },
  };
}

/** `--only=Goals`, and part of every full run: the goals table of issue 21. */
export async function measureFloorGoals(ctx: BenchContext): Promise<Figure[]> {
  const loadStart = loadNow();
  const floor = await startFloor(ctx);
  const connectFloor = createConnector(floor.baseUrl, ctx.kind);
  const clients: McpTestClient[] = [];
  const open = async (connect: Promise<McpTestClient>) => {
    const client = await connect;
    clients.push(client);
    return client;
  };
  try {
    const product = await open(ctx.connect("/mcp"));
    const [a, b, c] = [await open(connectFloor("/a/mcp")), await open(connectFloor("/b/mcp")), await open(connectFloor("/c/mcp"))];
    const sizes = { samples: ctx.sizes.samples, warmup: ctx.sizes.warmup, maxMs: ctx.sizes.maxMs };
    const figures: Figure[] = [];

    const list = await interleavedPairs(
      () => product.listTools(),
      () => a.listTools(),
      sizes,
    );
    const [pl, fl] = [summarize(list.a), summarize(list.b)];
    figures.push({
      id: "Goal tools/list",
      title: "tools/list, product ÷ bare createMcpHandler (floor A)",
      value: `${round(pl.p50 / fl.p50, 3)}x p50 (${round(pl.p50)} vs ${round(fl.p50)} ms; p99 ${round(pl.p99)} vs ${round(fl.p99)} ms)`,
      target: `≤ ${GOALS.toolsListRatio}x`,
      pass: pl.p50 / fl.p50 <= GOALS.toolsListRatio,
      details: { product: pl, floor: fl },
    });

    // The DO hop alone (floor B), reported beside: what the object costs before any fetch.
    const hop = await interleavedPairs(
      () => floorEcho(b, 0),
      () => floorEcho(a, 0),
      sizes,
    );
    const [hb, ha] = [summarize(hop.a), summarize(hop.b)];
    figures.push({
      id: "Floor DO hop",
      title: "floor B (+ Durable Object hop) ÷ floor A, echo tools/call",
      value: `+${round(hb.p50 - ha.p50)} ms (${round(hb.p50)} vs ${round(ha.p50)} ms p50)`,
      target: "(floor)",
      pass: null,
      details: { b: hb, a: ha },
    });

    const none = await interleavedPairs(
      () => callExpert(product, "no_tools", "hi"),
      () => floorEcho(c, 1),
      sizes,
    );
    figures.push(
      latencyFigure(
        "Goal call, no tool step",
        "expert call without a tool step (no_tools) above floor C with one fetch (DO hop + one model fetch)",
        summarize(none.a),
        summarize(none.b),
        "floor C(1)",
      ),
    );
    const one = await interleavedPairs(
      () => callExpert(product, "one_call", "go"),
      () => floorEcho(c, 3),
      sizes,
    );
    figures.push(
      latencyFigure(
        "Goal call, one tool step",
        "expert call with one tool step (one_call) above floor C with three fetches (DO hop + model, tool, model)",
        summarize(one.a),
        summarize(one.b),
        "floor C(3)",
      ),
    );

    figures.push(...(await cpuFigures(ctx, floor, product, c)));
    figures.push(await throughputFigure(ctx, floor));
    const load = `1-min load ${loadStart} → ${loadNow()}`;
    for (const figure of figures) figure.details = { ...figure.details, load };
    return figures;
  } finally {
    await Promise.allSettled(clients.map((client) => client.close()));
    await floor.stop();
  }
}

/**
 * CPU per call from the kernel's accounting of each `wrangler dev`'s Worker workerd (the one
 * started with the inspector), in alternating blocks of calls so both see the same machine.
 */
async function cpuFigures(ctx: BenchContext, floor: WranglerDev, product: McpTestClient, c: McpTestClient): Promise<Figure[]> {
  const perBlock = Math.max(20, Math.round(ctx.sizes.samples / 8));
  const blocks = 4;
  const figures: Figure[] = [];
  for (const scenario of CPU_SCENARIOS) {
    const fetches = 2 * scenario.toolSteps + 1;
    const totals = { product: 0, floor: 0, productWall: 0, floorWall: 0 };
    for (let i = 0; i < ctx.sizes.warmup; i++) {
      await callExpert(product, scenario.expert, scenario.query);
      await floorEcho(c, fetches);
    }
    for (let block = 0; block < blocks; block++) {
      const p0 = await workerdCpuMs(ctx.dev.pgid);
      let t = performance.now();
      for (let i = 0; i < perBlock; i++) await callExpert(product, scenario.expert, scenario.query);
      totals.productWall += performance.now() - t;
      const p1 = await workerdCpuMs(ctx.dev.pgid);
      const f0 = await workerdCpuMs(floor.pgid);
      t = performance.now();
      for (let i = 0; i < perBlock; i++) await floorEcho(c, fetches);
      totals.floorWall += performance.now() - t;
      const f1 = await workerdCpuMs(floor.pgid);
      totals.product += p1.worker - p0.worker;
      totals.floor += f1.worker - f0.worker;
    }
    const calls = perBlock * blocks;
    const [pc, fc] = [totals.product / calls, totals.floor / calls];
    figures.push({
      id: `Goal CPU ${scenario.toolSteps} tool steps`,
      title: `CPU per expert call with ${scenario.toolSteps} tool step${scenario.toolSteps === 1 ? "" : "s"} (${scenario.expert}) ÷ floor C with ${fetches} fetch${fetches === 1 ? "" : "es"}`,
      value: `${round(pc / fc, 2)}x (${round(pc, 2)} vs ${round(fc, 2)} ms CPU per call; wall ${round(totals.productWall / calls, 1)} vs ${round(totals.floorWall / calls, 1)} ms)`,
      target: `≤ ${GOALS.cpuRatio}x`,
      pass: pc / fc <= GOALS.cpuRatio,
      note:
        fc === 0
          ? "The floor's workerd used no measurable CPU (10 ms ticks): too few calls for a ratio."
          : "User + system CPU of the workerd that runs each Worker (and its Durable Objects), from /proc, 10 ms ticks, in alternating blocks.",
      details: { productMs: pc, floorMs: fc, calls },
    });
  }
  return figures;
}

/** One session (one user, one skill) at concurrency 8, one_call; floor C(3) at concurrency 8 into its one object beside it. */
async function throughputFigure(ctx: BenchContext, floor: WranglerDev): Promise<Figure> {
  const productClients: McpTestClient[] = [];
  const floorClients: McpTestClient[] = [];
  try {
    for (let i = 0; i < CONCURRENCY; i++) productClients.push(await ctx.connect("/mcp"));
    for (let i = 0; i < CONCURRENCY; i++) floorClients.push(await createConnector(floor.baseUrl, ctx.kind)("/c/mcp"));
    const burst = async (clients: McpTestClient[], call: (client: McpTestClient) => Promise<unknown>, total: number) => {
      let next = 0;
      const started = performance.now();
      await Promise.all(
        clients.map(async (client) => {
          while (next < total) {
            next += 1;
            await call(client);
          }
        }),
      );
      return { calls: total, seconds: (performance.now() - started) / 1000 };
    };
    const total = Math.max(CONCURRENCY * 10, ctx.sizes.samples);
    const productCall = (client: McpTestClient) => callExpert(client, "one_call", "go");
    const floorCall = (client: McpTestClient) => floorEcho(client, 3);
    await burst(productClients, productCall, CONCURRENCY);
    await burst(floorClients, floorCall, CONCURRENCY);
    const sums = { product: { calls: 0, seconds: 0 }, floor: { calls: 0, seconds: 0 } };
    for (let round = 0; round < 2; round++) {
      for (const [arm, clients, call] of [
        ["product", productClients, productCall],
        ["floor", floorClients, floorCall],
      ] as const) {
        const result = await burst(clients, call, total);
        sums[arm].calls += result.calls;
        sums[arm].seconds += result.seconds;
      }
    }
    const [p, f] = [sums.product.calls / sums.product.seconds, sums.floor.calls / sums.floor.seconds];
    return {
      id: "Goal one session, concurrency 8",
      title: "one session at concurrency 8, one_call expert calls per second (floor C(3) into one object beside it)",
      value: `${round(p, 1)} calls/s (floor ${round(f, 1)} calls/s; ${round(p / f, 3)}x)`,
      target: `≥ ${GOALS.callsPerSecond} calls/s`,
      pass: p >= GOALS.callsPerSecond,
      details: { product: sums.product, floor: sums.floor },
    };
  } finally {
    await Promise.allSettled([...productClients, ...floorClients].map((client) => client.close()));
  }
}
