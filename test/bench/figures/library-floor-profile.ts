import { writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import type { McpTestClient } from "../../e2e/harness/mcp-clients";
import { callExpert, createConnector, type BenchContext, type Figure } from "../bench-context";
import { attribute, cpuProfileSchema, moduleMap, type Attribution } from "../profile/profile-attribution";
import { InspectorSession, inspectorPortOf } from "../profile/inspector-session";
import { loadNow } from "../results-report";
import { round } from "../sample-stats";
import { floorEchoBase, startFloor } from "./floor-goals";

const scriptParsedSchema = z.looseObject({ scriptId: z.string(), url: z.string() });
const QUERIES: Record<string, string> = { no_tools: "hi", one_call: "go", many_steps: "steps=5" };
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
      const scripts: Array<{ scriptId: string; url: string }> = [];
      inspector.on((method, params) => {
        if (method === "Debugger.scriptParsed") scripts.push(scriptParsedSchema.parse(params));
      });
      await inspector.send("Debugger.enable");
      await new Promise((resolve) => setTimeout(resolve, 500));
      const bundle = scripts.filter((s) => s.url.endsWith(".js")).at(-1) ?? scripts.at(-1);
      if (!bundle) throw new Error(`the ${name} inspector reported no script`);
      const source = z.object({ scriptSource: z.string() }).parse(await inspector.send("Debugger.getScriptSource", { scriptId: bundle.scriptId }));
      await inspector.send("Debugger.disable");
      await inspector.send("Profiler.enable");
      await inspector.send("Profiler.setSamplingInterval", { interval: 100 });
      return new IsolateProfiler(inspector, bundle.scriptId, source.scriptSource, name);
    } catch (error) {
      inspector.close();
      throw error;
    }
  }

  start(): Promise<unknown> {
    return this.inspector.send("Profiler.start");
  }

  /** Stops, keeps the raw profile beside its bundle in the temp directory, and attributes it. */
  async stop(): Promise<{ attribution: Attribution; path: string }> {
    const { profile: raw } = z.object({ profile: z.unknown() }).parse(await this.inspector.send("Profiler.stop"));
    const path = join(tmpdir(), `slipsnisse-${this.name}-${Date.now()}.cpuprofile`);
    await writeFile(path, JSON.stringify(raw));
    await writeFile(`${path}.bundle.js`, this.source);
    return { attribution: attribute(cpuProfileSchema.parse(raw), this.bundleId, moduleMap(this.source), WATCH), path };
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

/** Product − D per key, largest excess first, with both sides. */
function excess(product: Map<string, number>, d: Map<string, number>): Array<{ key: string; product: number; d: number; diff: number }> {
  const keys = new Set([...product.keys(), ...d.keys()]);
  return [...keys]
    .map((key) => ({ key, product: product.get(key) ?? 0, d: d.get(key) ?? 0, diff: (product.get(key) ?? 0) - (d.get(key) ?? 0) }))
    .sort((a, b) => b.diff - a.diff);
}

const ms = (x: number) => round(x, 3).toFixed(3).padStart(7);

/**
 * PD (`--only=PD`, not part of a default run): V8 sampling profiles of the product's isolate and
 * of the library floor D's (test/bench/floor/, `/d/mcp`) at once, during one loop that alternates
 * a product call and a D call of the same expert (BENCH_PROFILE_EXPERT, default one_call), so both
 * see the same machine. Prints self time per call by module and by function for each, and the
 * product's excess over D: D runs the same libraries for the same exchange, so what the product
 * spends beyond D is ours (our modules, and library work our code asks for that D does not).
 */
export async function measureLibraryFloorProfile(ctx: BenchContext): Promise<Figure[]> {
  const loadStart = loadNow();
  const expert = process.env.BENCH_PROFILE_EXPERT ?? "one_call";
  const query = QUERIES[expert];
  if (query === undefined) throw new Error(`BENCH_PROFILE_EXPERT must be one of ${Object.keys(QUERIES).join(", ")} (floor D has no ${expert})`);
  const calls = Number(process.env.BENCH_PROFILE_CALLS ?? 300);
  const floor = await startFloor(ctx, floorEchoBase(ctx));
  const clients: McpTestClient[] = [];
  const profilers: IsolateProfiler[] = [];
  try {
    const product = await ctx.connect("/mcp");
    clients.push(product);
    const d = await createConnector(floor.baseUrl, ctx.kind)("/d/mcp");
    clients.push(d);
    for (let i = 0; i < 30; i++) {
      await callExpert(product, expert, query);
      await callExpert(d, expert, query);
    }
    const productProfiler = await IsolateProfiler.open("expert", ctx.dev.pgid);
    profilers.push(productProfiler);
    const dProfiler = await IsolateProfiler.open("floor-d", floor.pgid);
    profilers.push(dProfiler);
    await Promise.all([productProfiler.start(), dProfiler.start()]);
    for (let i = 0; i < calls; i++) {
      if (i % 2 === 0) {
        await callExpert(product, expert, query);
        await callExpert(d, expert, query);
      } else {
        await callExpert(d, expert, query);
        await callExpert(product, expert, query);
      }
    }
    const [p, l] = await Promise.all([productProfiler.stop(), dProfiler.stop()]);
    const busy = (a: Attribution) => (a.totalMs - (a.selfByModule.find((m) => m.module === "(idle)")?.ms ?? 0)) / calls;
    const [pBusy, dBusy] = [busy(p.attribution), busy(l.attribution)];
    const modules = excess(
      perCall(
        p.attribution.selfByModule.filter((m) => m.module !== "(idle)").map((m) => ({ key: m.module, ms: m.ms })),
        calls,
      ),
      perCall(
        l.attribution.selfByModule.filter((m) => m.module !== "(idle)").map((m) => ({ key: m.module, ms: m.ms })),
        calls,
      ),
    );
    const functions = excess(
      perCall(
        p.attribution.selfByFunction.map((f) => ({ key: functionKey(f.frame), ms: f.ms })),
        calls,
      ),
      perCall(
        l.attribution.selfByFunction.map((f) => ({ key: functionKey(f.frame), ms: f.ms })),
        calls,
      ),
    );
    const loadEnd = loadNow();
    console.error(`[bench] PD: ${calls} ${expert}("${query}") calls each, alternating; 1-min load ${loadStart} → ${loadEnd}`);
    console.error(`[bench] PD isolate busy per call: product ${round(pBusy, 3)} ms, floor D ${round(dBusy, 3)} ms; profiles ${p.path}, ${l.path}`);
    console.error("[bench] PD self time by module, ms per call (product, D, product − D), largest excess first:");
    for (const m of modules.slice(0, 40)) console.error(`  ${ms(m.product)} ${ms(m.d)} ${ms(m.diff)}  ${m.key}`);
    console.error("[bench] PD ... and the modules where D spends more than the product:");
    for (const m of modules.filter((row) => row.diff < -0.01).reverse()) console.error(`  ${ms(m.product)} ${ms(m.d)} ${ms(m.diff)}  ${m.key}`);
    console.error("[bench] PD self time by function, ms per call (product, D, product − D), largest excess first:");
    for (const f of functions.slice(0, 50)) console.error(`  ${ms(f.product)} ${ms(f.d)} ${ms(f.diff)}  ${f.key}`);
    console.error("[bench] PD inclusive time of watched frames, product then D (ms per call):");
    for (const f of p.attribution.inclusive.slice(0, 30)) console.error(`  P ${ms(f.ms / calls)}  ${f.frame}`);
    for (const f of l.attribution.inclusive.slice(0, 30)) console.error(`  D ${ms(f.ms / calls)}  ${f.frame}`);
    const top = modules.slice(0, 8);
    return [
      {
        id: "PD cpu",
        title: `CPU of the product's isolate ÷ library floor D's per ${expert} call (sampling profiles, ${calls} alternating calls each)`,
        value: `${round(pBusy / dBusy, 2)}x (${round(pBusy, 2)} vs ${round(dBusy, 2)} ms busy per call)`,
        target: "(breakdown)",
        pass: null,
        note: `The product's excess over D by module, ms per call: ${top.map((m) => `${m.key} +${round(m.diff, 2)} (${round(m.product, 2)} vs ${round(m.d, 2)})`).join("; ")}`,
        details: {
          calls,
          expert,
          productBusyMs: pBusy,
          dBusyMs: dBusy,
          load: `${loadStart} → ${loadEnd}`,
          modules: modules.slice(0, 60),
          functions: functions.slice(0, 80),
        },
      },
    ];
  } finally {
    for (const profiler of profilers) profiler.close();
    await Promise.allSettled(clients.map((client) => client.close()));
    await floor.stop();
  }
}
