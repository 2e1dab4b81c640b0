import { z } from "zod";
import { callExpert, type BenchContext, type Figure } from "../bench-context";
import { attribute, cpuProfileSchema, moduleMap } from "../profile/profile-attribution";
import { InspectorSession, inspectorPortOf, keepProfile } from "../profile/inspector-session";
import { round } from "../sample-stats";

const WATCH =
  /buildExpertServer|registerTool|fromJsonSchema|loadSkill|callExpert|runExpert|generateText|buildExpertToolset|toolInputSchema|resolveModel|append|finish|start \[|history|log \[|redact|guardedFetch|createMcpHandler|handleRequest|validate|parse|safeParse|JSON|serveMcp|callTool|listTools|fetch/;

/**
 * P: a V8 sampling CPU profile of the Worker's isolate (Worker and ExpertSession share it in
 * wrangler dev) during a steady loop of one-echo-call expert calls, attributed to bundled
 * modules through esbuild's `// path` markers. CPU ms per call, by module; native work (SQLite,
 * fetch, JSON) shows under its JS caller or as (program).
 */
export async function measureCpuProfile(ctx: BenchContext): Promise<Figure[]> {
  const inspector = await InspectorSession.open(await inspectorPortOf(ctx.dev.pgid));
  const worker = await ctx.connect("/mcp");
  try {
    const bundle = await inspector.workerBundle("product's");
    const expert = process.env.BENCH_PROFILE_EXPERT ?? "one_call";
    for (let i = 0; i < 30; i++) await callExpert(worker, expert, "go");
    await inspector.send("Profiler.enable");
    await inspector.send("Profiler.setSamplingInterval", { interval: 100 });
    await inspector.send("Profiler.start");
    const calls = Number(process.env.BENCH_PROFILE_CALLS ?? 300);
    const started = performance.now();
    for (let i = 0; i < calls; i++) await callExpert(worker, expert, "go");
    const wallMs = performance.now() - started;
    const { profile: raw } = z.object({ profile: z.unknown() }).parse(await inspector.send("Profiler.stop"));
    const profile = cpuProfileSchema.parse(raw);
    const path = await keepProfile("expert", raw, bundle.source);
    const result = attribute(profile, bundle.scriptId, moduleMap(bundle.source), WATCH);
    const per = (ms: number) => round(ms / calls, 3);
    const idle = result.selfByModule.find((m) => m.module === "(idle)")?.ms ?? 0;
    const busy = result.totalMs - idle;
    console.error(`[bench] P: ${calls} ${expert} calls, wall ${round(wallMs / calls)} ms/call, isolate busy ${per(busy)} ms/call; profile ${path}`);
    console.error("[bench] P self time by module (ms per call):");
    for (const m of result.selfByModule.slice(0, 40)) console.error(`  ${per(m.ms).toFixed(3).padStart(7)}  ${m.module}`);
    console.error("[bench] P self time by function (ms per call):");
    for (const f of result.selfByFunction.slice(0, 40)) console.error(`  ${per(f.ms).toFixed(3).padStart(7)}  ${f.frame}`);
    console.error("[bench] P inclusive time of watched frames (ms per call):");
    for (const f of result.inclusive.slice(0, 60)) console.error(`  ${per(f.ms).toFixed(3).padStart(7)}  ${f.frame}`);
    const top = result.selfByModule.filter((m) => m.module !== "(idle)").slice(0, 8);
    return [
      {
        id: "P cpu",
        title: `CPU of the Worker isolate per ${expert} call (sampling profile over ${calls} calls)`,
        value: `${per(busy)} ms busy of ${round(wallMs / calls)} ms wall per call`,
        target: "(breakdown)",
        pass: null,
        note: `Self time by module per call: ${top.map((m) => `${m.module} ${per(m.ms)} ms`).join("; ")}`,
        details: { calls, wallMs, busyMs: busy, selfByModule: result.selfByModule.slice(0, 40), inclusive: result.inclusive.slice(0, 60) },
      },
    ];
  } finally {
    await worker.close();
    inspector.close();
  }
}
