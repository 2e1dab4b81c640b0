import { readdir, readFile } from "node:fs/promises";
import { callExpert, TOOL_STEP_SCENARIOS, type BenchContext, type Figure } from "../bench-context";
import { round } from "../sample-stats";

/**
 * Linux reports process CPU in /proc/<pid>/stat in clock ticks of 1/100 s (USER_HZ): a block of
 * 25 calls of a 4 ms floor is 10 ticks, so one tick more or less moved a ratio by 10%. The
 * scheduler's own count per thread (/proc/<pid>/task/<tid>/schedstat, first field) is in ns; the
 * ticks are the fallback on a kernel without it.
 */
const MS_PER_TICK = 10;

/** CPU time (ms) of each thread of process `pid` from schedstat (empty when the kernel has none). */
async function threadSchedstatMs(pid: string): Promise<Map<string, number>> {
  const tasks = await readdir(`/proc/${pid}/task`).catch(() => [] as string[]);
  const threads = new Map<string, number>();
  for (const tid of tasks) {
    const line = await readFile(`/proc/${pid}/task/${tid}/schedstat`, "utf8").catch(() => "");
    const runtime = Number(line.split(" ")[0]);
    if (line === "" || !Number.isFinite(runtime)) continue;
    threads.set(tid, runtime / 1e6);
  }
  return threads;
}

/** CPU time (ms) of every thread of process `pid` from schedstat, or undefined when the kernel has none. */
async function schedstatMs(pid: string): Promise<number | undefined> {
  const threads = await threadSchedstatMs(pid);
  return threads.size === 0 ? undefined : [...threads.values()].reduce((sum, ms) => sum + ms, 0);
}

/**
 * The pids of wrangler dev's workerd processes in process group `pgid`, the Worker's (started with
 * the inspector) apart, each with its /proc stat fields after the command name (state ppid pgrp …).
 */
async function workerdPids(pgid: number): Promise<Array<{ pid: string; worker: boolean; fields: string[] }>> {
  const found: Array<{ pid: string; worker: boolean; fields: string[] }> = [];
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, "utf8").catch(() => "");
    const comm = /\((.*)\)/.exec(stat)?.[1] ?? "";
    // The process group is the third field after the command name.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (!comm.includes("workerd") || Number(fields[2]) !== pgid) continue;
    const cmdline = await readFile(`/proc/${entry}/cmdline`, "utf8").catch(() => "");
    found.push({ pid: entry, worker: cmdline.includes("--inspector-addr"), fields });
  }
  return found;
}

/**
 * CPU time (ms) of each thread of the Worker's workerd in process group `pgid`. Under wrangler
 * dev one thread of it runs the Worker, its Durable Objects and local D1 alike; the others are
 * V8's helpers (GC, compilation) and I/O.
 */
export async function workerdThreadCpuMs(pgid: number): Promise<Map<string, number>> {
  const worker = await workerdWorkerPid(pgid);
  return worker === undefined ? new Map() : threadSchedstatMs(worker);
}

/** The pid of the workerd in process group `pgid` that runs the Worker (wrangler starts it with the inspector). */
export async function workerdWorkerPid(pgid: number): Promise<string | undefined> {
  return (await workerdPids(pgid)).find((process) => process.worker)?.pid;
}

/** The largest share of `wallMs` one thread spent on CPU between two readings of workerdThreadCpuMs. */
export function busiestThreadShare(before: Map<string, number>, after: Map<string, number>, wallMs: number): number {
  let busiest = 0;
  for (const [tid, ms] of after) busiest = Math.max(busiest, ms - (before.get(tid) ?? 0));
  return wallMs > 0 ? busiest / wallMs : Number.NaN;
}

/** The machine's CPU ticks from /proc/stat's first line: all of them, and those not idle or waiting on I/O. */
export async function machineCpuTicks(): Promise<{ total: number; busy: number }> {
  const line = (await readFile("/proc/stat", "utf8")).split("\n")[0] ?? "";
  const ticks = line.trim().split(/\s+/).slice(1).map(Number);
  // user nice system idle iowait irq softirq steal (guest time is counted in user already).
  const total = ticks.slice(0, 8).reduce((sum, tick) => sum + tick, 0);
  return { total, busy: total - (ticks[3] ?? 0) - (ticks[4] ?? 0) };
}

export interface WorkerdCpu {
  /** The workerd that runs the Worker and its Durable Objects (wrangler starts it with the inspector). */
  worker: number;
  /** wrangler dev's entry workerd in front of it (routing the platform does at its edge). */
  entry: number;
}

/** User + system CPU (ms) of wrangler dev's workerd processes, every thread, from the kernel's accounting (schedstat's ns, else stat's ticks). */
export async function workerdCpuMs(pgid: number): Promise<WorkerdCpu> {
  const cpu: WorkerdCpu = { worker: 0, entry: 0 };
  for (const { pid, worker, fields } of await workerdPids(pgid)) {
    // utime and stime: the 12th and 13th fields after the command name (14th and 15th of the line).
    const ms = (await schedstatMs(pid)) ?? (Number(fields[11]) + Number(fields[12])) * MS_PER_TICK;
    if (worker) cpu.worker += ms;
    else cpu.entry += ms;
  }
  return cpu;
}

/**
 * CPU per expert call, the unit Workers bills, for 0, 1 and 5 tool steps: the kernel's CPU
 * accounting of the workerd process that runs the Worker and the ExpertSession (one isolate under
 * wrangler dev, on workerd's main thread) over a loop of calls, divided by the calls.
 */
export async function measureCpuPerCall(ctx: BenchContext): Promise<Figure[]> {
  const worker = await ctx.connect("/mcp");
  try {
    const calls = Math.max(50, Math.round(ctx.sizes.samples / 2));
    const rows: Array<{ toolSteps: number; expert: string; workerMs: number; entryMs: number; wallMs: number }> = [];
    for (const scenario of TOOL_STEP_SCENARIOS) {
      for (let i = 0; i < ctx.sizes.warmup; i++) await callExpert(worker, scenario.expert, scenario.query);
      const before = await workerdCpuMs(ctx.dev.pgid);
      const started = performance.now();
      for (let i = 0; i < calls; i++) await callExpert(worker, scenario.expert, scenario.query);
      const wallMs = performance.now() - started;
      const after = await workerdCpuMs(ctx.dev.pgid);
      if (after.worker === 0) throw new Error("found no workerd process started with --inspector-addr in wrangler dev's process group");
      rows.push({
        toolSteps: scenario.toolSteps,
        expert: scenario.expert,
        workerMs: (after.worker - before.worker) / calls,
        entryMs: (after.entry - before.entry) / calls,
        wallMs: wallMs / calls,
      });
    }
    const [none, , five] = rows;
    const perStep = none && five ? (five.workerMs - none.workerMs) / 5 : Number.NaN;
    return rows.map((row) => ({
      id: `CPU ${row.toolSteps} tool steps`,
      title: `CPU ms per expert call with ${row.toolSteps} tool step${row.toolSteps === 1 ? "" : "s"} (${row.expert}, ${calls} calls in a loop)`,
      value:
        `${round(row.workerMs, 1)} ms CPU per call (wall ${round(row.wallMs, 1)} ms; wrangler's entry workerd another ${round(row.entryMs, 1)} ms)` +
        (row === five ? `; ~${round(perStep, 1)} ms per tool step` : ""),
      target: "(reported; Workers bills CPU ms)",
      pass: null,
      note:
        "User + system CPU from /proc of the workerd process that runs the Worker and the ExpertSession (wrangler dev starts it with the " +
        "inspector; both share its isolate on the main thread), over the loop, divided by the calls; the scheduler's ns per thread (10 ms " +
        "ticks on a kernel without schedstat). An upper bound on what Workers bills: it adds workerd's HTTP, RPC and socket work and V8's helper threads. CPU time, so a " +
        "loaded machine slows the calls without inflating it much. A V8 sampling profile over the inspector was tried and rejected: on this " +
        "loaded 2-core machine its sampler thread is starved, so its sample count came out several times below the kernel's figure and its time deltas (which count waits) several times above.",
      details: { ...row, calls },
    }));
  } finally {
    await worker.close();
  }
}
