import { z } from "zod";
import type { McpTestClient } from "../../e2e/harness/mcp-clients";
import { callExpert, callInLanes, createConnector, TOOL_STEP_SCENARIOS, type BenchContext, type Figure } from "../bench-context";
import { attribute, cpuProfileSchema, moduleMap, type Attribution } from "../profile/profile-attribution";
import { InspectorSession, inspectorPortOf, keepProfile } from "../profile/inspector-session";
import { loadNow } from "../results-report";
import { round } from "../sample-stats";
import { workerdCpuMs } from "./cpu-per-call";
import { floorEchoBases, startFloor } from "./floor-goals";

const QUERIES: Record<string, string> = Object.fromEntries(TOOL_STEP_SCENARIOS.map((scenario) => [scenario.expert, scenario.query]));
const SAMPLING_INTERVAL_US = 100;
const WATCH = /generateText|callTool|runExpert|callExpert|expert \[|handleRequest|createMcpHandler|parse|safeParse|validate|fetch/;

/** A sampling profiler on one `wrangler dev`'s Worker isolate, with the bundle it runs (for module attribution). */
class IsolateProfiler {
  private constructor(
    private readonly inspector: InspectorSession,
    private readonly bundleId: string,
    private readonly source: string,
    readonly name: string,
  ) {}

  static async open(name: string, pgid: number): Promise<IsolateProfiler> {
    const inspector = await InspectorSession.open(await inspectorPortOf(pgid));
    try {
      const bundle = await inspector.workerBundle(name);
      await inspector.send("Profiler.enable");
      await inspector.send("Profiler.setSamplingInterval", { interval: SAMPLING_INTERVAL_US });
      return new IsolateProfiler(inspector, bundle.scriptId, bundle.source, name);
    } catch (error) {
      inspector.close();
      throw error;
    }
  }

  start(): Promise<unknown> {
    return this.inspector.send("Profiler.start");
  }

  /**
   * Stops, keeps the raw profile beside its bundle in the temp directory, and attributes it twice:
   * by the sampler's time deltas (as figure P does) and by sample counts (every delta taken as the
   * nominal interval).
   */
  async stop(): Promise<{ byTime: Attribution; bySamples: Attribution; path: string }> {
    const { profile: raw } = z.object({ profile: z.unknown() }).parse(await this.inspector.send("Profiler.stop"));
    const path = await keepProfile(this.name, raw, this.source);
    const profile = cpuProfileSchema.parse(raw);
    const map = moduleMap(this.source);
    const uniform = { ...profile, timeDeltas: profile.timeDeltas.map(() => SAMPLING_INTERVAL_US) };
    return { byTime: attribute(profile, this.bundleId, map, WATCH), bySamples: attribute(uniform, this.bundleId, map, WATCH), path };
  }

  /**
   * Profiles one block of calls (`run`) and reads the kernel's CPU of the isolate's workerd over the same
   * block. On a loaded machine a time delta also counts the time the thread was preempted in the
   * middle of whatever frame it was in, so single frames swell at random; the block's sample
   * shares are therefore scaled to the kernel's CPU instead: ms of CPU per frame, by share.
   */
  async block(
    pgid: number,
    run: () => Promise<unknown>,
  ): Promise<{ scaled: Attribution; path: string; kernelMs: number; wallMs: number; busyByTimeMs: number; busyBySamplesMs: number }> {
    await this.start();
    const before = await workerdCpuMs(pgid);
    const started = performance.now();
    await run();
    const wallMs = performance.now() - started;
    const after = await workerdCpuMs(pgid);
    const { byTime, bySamples, path } = await this.stop();
    const kernelMs = after.worker - before.worker;
    const busyBySamplesMs = busyMs(bySamples);
    return {
      scaled: scale(bySamples, busyBySamplesMs > 0 ? kernelMs / busyBySamplesMs : 0),
      path,
      kernelMs,
      wallMs,
      busyByTimeMs: busyMs(byTime),
      busyBySamplesMs,
    };
  }

  close(): void {
    this.inspector.close();
  }
}

/** A function's key across two bundles: its name and module, without the bundle's line number. */
const functionKey = (frame: string) => frame.replace(/:\d+\]$/, "]");

function perCall(rows: Array<{ key: string; ms: number }>, calls: number): Map<string, number> {
  const map = new Map<string, number>();
  for (const row of rows) map.set(row.key, (map.get(row.key) ?? 0) + row.ms / calls);
  return map;
}

/** Sums the rows of several blocks' attributions by key, per call. */
function merged(blocks: Attribution[], rows: (a: Attribution) => Array<{ key: string; ms: number }>, calls: number): Map<string, number> {
  return perCall(
    blocks.flatMap((a) => rows(a)),
    calls,
  );
}

const busyMs = (a: Attribution) => a.totalMs - (a.selfByModule.find((m) => m.module === "(idle)")?.ms ?? 0);
const moduleRows = (a: Attribution) => a.selfByModule.filter((m) => m.module !== "(idle)").map((m) => ({ key: m.module, ms: m.ms }));
const functionRows = (a: Attribution) => a.selfByFunction.filter((f) => !f.frame.startsWith("(idle)")).map((f) => ({ key: functionKey(f.frame), ms: f.ms }));
const inclusiveRows = (a: Attribution) => a.inclusive.map((f) => ({ key: functionKey(f.frame), ms: f.ms }));

/** Product − D per key, largest excess first, with both sides. */
function excess(product: Map<string, number>, d: Map<string, number>): Array<{ key: string; product: number; d: number; diff: number }> {
  const keys = new Set([...product.keys(), ...d.keys()]);
  return [...keys]
    .map((key) => ({ key, product: product.get(key) ?? 0, d: d.get(key) ?? 0, diff: (product.get(key) ?? 0) - (d.get(key) ?? 0) }))
    .sort((a, b) => b.diff - a.diff);
}

function scale(a: Attribution, factor: number): Attribution {
  const times = <T extends { ms: number }>(rows: T[]) => rows.map((row) => ({ ...row, ms: row.ms * factor }));
  return { totalMs: a.totalMs * factor, selfByModule: times(a.selfByModule), selfByFunction: times(a.selfByFunction), inclusive: times(a.inclusive) };
}

/**
 * Coarse groups of the module labels, for the summary line: our code, the libraries (npm
 * packages, hono included), the session's SQLite and alarm, Web streams, and the engine's own.
 */
const LIBRARIES = /^(@[\w.-]+\/[\w.-]+|agents|zod|ai|hono|wrangler|eventsource-parser|json-schema|partyserver)(\/|$)/;
const GROUPS: Array<{ group: string; test: (key: string) => boolean }> = [
  { group: "our modules (src/)", test: (key) => key.startsWith("src/") },
  { group: "floor D's own glue (floor-worker.ts)", test: (key) => key === "floor-worker.ts" },
  { group: "npm libraries (hono and wrangler's middleware included)", test: (key) => LIBRARIES.test(key) || key.startsWith(".wrangler/") },
  {
    group: "SQLite storage and alarms",
    test: (key) => /^(exec|sync|getAlarm|setAlarm|set scheduledTime|\(other script\) cloudflare-internal:d1-api)$/.test(key),
  },
  {
    group: "Web streams",
    test: (key) => /^(TransformStream|pipeThrough|pipeTo|ReadableStream|WritableStream|enqueue|read|getReader|TextDecoderStream|releaseLock)$/.test(key),
  },
  { group: "engine ((program), (native), GC)", test: (key) => /^\((program|native|garbage collector|bundle prelude)\)$/.test(key) },
];

function grouped(rows: Array<{ key: string; product: number; d: number }>): Array<{ key: string; product: number; d: number; diff: number }> {
  const sums = new Map<string, { product: number; d: number }>();
  for (const row of rows) {
    const group = GROUPS.find((g) => g.test(row.key))?.group ?? "other (Web APIs, wrangler's entry, timers)";
    const sum = sums.get(group) ?? { product: 0, d: 0 };
    sum.product += row.product;
    sum.d += row.d;
    sums.set(group, sum);
  }
  return [...sums.entries()].map(([key, sum]) => ({ key, ...sum, diff: sum.product - sum.d })).sort((a, b) => b.diff - a.diff);
}

const ms = (x: number) => round(x, 3).toFixed(3).padStart(7);

/**
 * PD (`--only=PD`, not part of a default run): V8 sampling profiles of the product's isolate and
 * of the library floor D's (test/bench/floor/, `/d/mcp`), in alternating blocks of calls of the
 * same expert (BENCH_PROFILE_EXPERT, default one_call; about BENCH_PROFILE_CALLS each, default
 * 300; BENCH_PROFILE_CONCURRENCY of them in flight at a time, default 1, each with its own
 * client, as the concurrency goal sends them), so both see the same machine. Prints self time per
 * call by module and by function for each, and the product's excess over D: D runs the same
 * libraries for the same exchange, so what the product spends beyond D is ours (our modules, and
 * library work our code asks for that D does not).
 */
export async function measureLibraryFloorProfile(ctx: BenchContext): Promise<Figure[]> {
  const loadStart = loadNow();
  const expert = process.env.BENCH_PROFILE_EXPERT ?? "one_call";
  const query = QUERIES[expert];
  if (query === undefined) throw new Error(`BENCH_PROFILE_EXPERT must be one of ${Object.keys(QUERIES).join(", ")} (floor D has no ${expert})`);
  const calls = Number(process.env.BENCH_PROFILE_CALLS ?? 300);
  const lanes = Number(process.env.BENCH_PROFILE_CONCURRENCY ?? 1);
  if (!Number.isSafeInteger(lanes) || lanes < 1 || lanes > 64) throw new Error("BENCH_PROFILE_CONCURRENCY must be a whole number from 1 to 64");
  const floor = await startFloor(ctx, floorEchoBases(ctx));
  const clients: McpTestClient[] = [];
  const profilers: IsolateProfiler[] = [];
  try {
    const products: McpTestClient[] = [];
    const ds: McpTestClient[] = [];
    const connectD = createConnector(floor.baseUrl, ctx.kind);
    for (let lane = 0; lane < lanes; lane++) {
      products.push(await ctx.connect("/mcp"));
      ds.push(await connectD("/d/mcp"));
    }
    clients.push(...products, ...ds);
    const callOne = (client: McpTestClient) => callExpert(client, expert, query);
    await callInLanes(products, 30, callOne);
    await callInLanes(ds, 30, callOne);
    const productProfiler = await IsolateProfiler.open("expert", ctx.dev.pgid);
    profilers.push(productProfiler);
    const dProfiler = await IsolateProfiler.open("floor-d", floor.pgid);
    profilers.push(dProfiler);
    // One isolate profiled at a time, in alternating blocks (as the goals' CPU blocks): with both
    // profilers on at once, each isolate's busy time came out near the loop's wall time.
    const blocks = 6;
    const perBlock = Math.max(1, Math.round(calls / blocks));
    const productBlocks: Attribution[] = [];
    const dBlocks: Attribution[] = [];
    const kernel = { product: 0, d: 0 };
    const wall = { product: 0, d: 0 };
    const sampler = { productTime: 0, productSamples: 0, dTime: 0, dSamples: 0 };
    const paths: string[] = [];
    for (let block = 0; block < blocks; block++) {
      const p = await productProfiler.block(ctx.dev.pgid, () => callInLanes(products, perBlock, callOne));
      const l = await dProfiler.block(floor.pgid, () => callInLanes(ds, perBlock, callOne));
      productBlocks.push(p.scaled);
      dBlocks.push(l.scaled);
      kernel.product += p.kernelMs;
      kernel.d += l.kernelMs;
      wall.product += p.wallMs;
      wall.d += l.wallMs;
      sampler.productTime += p.busyByTimeMs;
      sampler.productSamples += p.busyBySamplesMs;
      sampler.dTime += l.busyByTimeMs;
      sampler.dSamples += l.busyBySamplesMs;
      if (block === 0) paths.push(p.path, l.path);
    }
    const n = perBlock * blocks;
    const [pKernel, dKernel] = [kernel.product / n, kernel.d / n];
    const modules = excess(merged(productBlocks, moduleRows, n), merged(dBlocks, moduleRows, n));
    const functions = excess(merged(productBlocks, functionRows, n), merged(dBlocks, functionRows, n));
    const inclusive = excess(merged(productBlocks, inclusiveRows, n), merged(dBlocks, inclusiveRows, n));
    const loadEnd = loadNow();
    console.error(
      `[bench] PD: ${n} ${expert}("${query}") calls each, ${lanes === 1 ? "one at a time" : `${lanes} in flight`}, ${blocks} alternating blocks; 1-min load ${loadStart} → ${loadEnd}`,
    );
    console.error(
      `[bench] PD per call: kernel CPU of the workerd: product ${round(pKernel, 2)} ms, floor D ${round(dKernel, 2)} ms; ` +
        `sampler busy by time deltas ${round(sampler.productTime / n, 2)} / ${round(sampler.dTime / n, 2)} ms, ` +
        `by sample count ${round(sampler.productSamples / n, 2)} / ${round(sampler.dSamples / n, 2)} ms; ` +
        `calls per second ${round((1000 * n) / wall.product, 1)} / ${round((1000 * n) / wall.d, 1)} (the profiler on); first blocks' profiles ${paths.join(", ")}`,
    );
    console.error("[bench] PD figures below: each block's sample shares scaled to its kernel CPU, ms per call.");
    console.error("[bench] PD self time by group, ms per call (product, D, product − D):");
    for (const g of grouped(modules)) console.error(`  ${ms(g.product)} ${ms(g.d)} ${ms(g.diff)}  ${g.key}`);
    console.error("[bench] PD self time by module, ms per call (product, D, product − D), largest excess first:");
    for (const m of modules.slice(0, 45)) console.error(`  ${ms(m.product)} ${ms(m.d)} ${ms(m.diff)}  ${m.key}`);
    console.error("[bench] PD ... and the modules where D spends more than the product:");
    for (const m of modules.filter((row) => row.diff < -0.01).reverse()) console.error(`  ${ms(m.product)} ${ms(m.d)} ${ms(m.diff)}  ${m.key}`);
    console.error("[bench] PD self time by function, ms per call (product, D, product − D), largest excess first:");
    for (const f of functions.slice(0, 60)) console.error(`  ${ms(f.product)} ${ms(f.d)} ${ms(f.diff)}  ${f.key}`);
    console.error("[bench] PD inclusive time of watched frames, ms per call (product, D, product − D):");
    for (const f of inclusive.slice(0, 40)) console.error(`  ${ms(f.product)} ${ms(f.d)} ${ms(f.diff)}  ${f.key}`);
    const top = modules.slice(0, 8);
    return [
      {
        id: "PD cpu",
        title: `CPU of the product's isolate ÷ library floor D's per ${expert} call (sampling profiles, ${n} calls each in alternating blocks)`,
        value: `${round(pKernel / dKernel, 2)}x (${round(pKernel, 2)} vs ${round(dKernel, 2)} ms kernel CPU per call, profiled)`,
        target: "(breakdown)",
        pass: null,
        note: `The product's excess over D by module, ms of CPU per call (sample shares scaled to the kernel's CPU): ${top.map((m) => `${m.key} +${round(m.diff, 2)} (${round(m.product, 2)} vs ${round(m.d, 2)})`).join("; ")}`,
        details: {
          calls: n,
          expert,
          sampler: {
            productBusyByTimeMs: sampler.productTime / n,
            productBusyBySamplesMs: sampler.productSamples / n,
            dBusyByTimeMs: sampler.dTime / n,
            dBusyBySamplesMs: sampler.dSamples / n,
          },
          productKernelMs: pKernel,
          dKernelMs: dKernel,
          load: `${loadStart} → ${loadEnd}`,
          groups: grouped(modules),
          modules: modules.slice(0, 60),
          functions: functions.slice(0, 80),
          inclusive: inclusive.slice(0, 40),
        },
      },
    ];
  } finally {
    for (const profiler of profilers) profiler.close();
    await Promise.allSettled(clients.map((client) => client.close()));
    await floor.stop();
  }
}
