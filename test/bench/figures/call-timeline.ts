import { spawn, spawnSync } from "node:child_process";
import { closeSync, fsyncSync, openSync } from "node:fs";
import { mkdtemp, readdir, readFile, readlink, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { McpTestClient } from "../../e2e/harness/mcp-clients";
import { callExpert, createConnector, TOOL_STEP_SCENARIOS, type BenchContext, type Figure } from "../bench-context";
import { loadNow } from "../results-report";
import { median, round, signed } from "../sample-stats";
import { callsOf, parseTrace, segments, type Role, type Segments } from "./syscall-timeline";
import { workerdWorkerPid } from "./cpu-per-call";
import { floorEchoBases, startFloor } from "./floor-goals";

const ARMS = ["product", "d", "e"] as const;
type Arm = (typeof ARMS)[number];
const ORDERS: ReadonlyArray<readonly Arm[]> = [
  ["product", "d", "e"],
  ["d", "e", "product"],
  ["e", "product", "d"],
  ["e", "d", "product"],
  ["product", "e", "d"],
  ["d", "product", "e"],
];
/** Rounds between two reads of the sockets' roles (their connections stay busy meanwhile). */
const ROUNDS_PER_BLOCK = 25;

/**
 * TL (`--only=TL`, not part of a default run): where one call's wall time goes, segment by
 * segment, in the product and in the floors D and E. `perf trace` records the socket and fsync
 * syscalls of the three Worker workerds (one per arm) while the arms take turns calling one
 * expert, a call at a time; each call is cut at its syscalls (the request read, the start
 * commit's fsync, every model and tool request written and answer read, the end commit's fsync,
 * the answer written) and each segment's median is compared across the arms. perf reads the kernel's
 * syscall tracepoints; strace, tried first, stops the thread at every syscall, which doubled the
 * product's CPU and swelled its commits' many small page writes beyond E's few. The client's own
 * time per call is kept too: what it waited beyond the Worker's workerd is wrangler's entry
 * workerd, loopback and the client's work. `BENCH_TL_CALLS` sets the calls per arm and expert
 * (default 150); `BENCH_TL_KEEP=1` keeps the raw trace in the temp directory.
 */
export async function measureCallTimeline(ctx: BenchContext): Promise<Figure[]> {
  if (spawnSync("perf", ["--version"]).status !== 0) throw new Error("figure TL needs `perf` (Debian's linux-perf) on PATH, with permission to trace syscalls");
  const loadStart = loadNow();
  const calls = Number(process.env.BENCH_TL_CALLS ?? 150);
  // D and E each in a workerd of their own, as the product is: a workerd that served the call
  // just before answers faster than one idle since its own last turn (floor-goals.ts).
  const echo = floorEchoBases(ctx);
  const floor = await startFloor(ctx, echo);
  const floors = [floor];
  const clients: McpTestClient[] = [];
  const dir = await mkdtemp(join(tmpdir(), "slipsnisse-timeline-"));
  try {
    const floorE = await startFloor(ctx, echo);
    floors.push(floorE);
    const arms: Record<Arm, McpTestClient> = {
      product: await ctx.connect("/mcp"),
      d: await createConnector(floor.baseUrl, ctx.kind)("/d/mcp"),
      e: await createConnector(floorE.baseUrl, ctx.kind)("/e/mcp"),
    };
    clients.push(...Object.values(arms));
    for (const scenario of TOOL_STEP_SCENARIOS)
      for (const arm of ARMS) for (let i = 0; i < 10; i++) await callExpert(arms[arm], scenario.expert, scenario.query);
    const [productPid, dPid, ePid] = [await workerdWorkerPid(ctx.dev.pgid), await workerdWorkerPid(floor.pgid), await workerdWorkerPid(floorE.pgid)];
    if (productPid === undefined || dPid === undefined || ePid === undefined)
      throw new Error("found no Worker workerd (started with --inspector-addr) for the product or a floor");

    const file = join(dir, "trace.txt");
    // The bench marks each block's start in the trace with an fsync of its own (a connection
    // may close and its fd come back for another): the sockets' roles read after a block hold for
    // the events since its mark, its calls having kept their connections busy.
    // Synchronous, so the fsync is the main thread's (tid = pid), not a libuv worker's.
    const marker = openSync(join(dir, "marker"), "w");
    const mark = () => fsyncSync(marker);
    const benchPid = String(process.pid);
    const pids = [productPid, dPid, ePid];
    const perf = spawn("perf", ["trace", "-p", [...pids, benchPid].join(","), "-e", "sendto,recvfrom,writev,fsync", "-o", file], { stdio: "ignore" });
    const exited = new Promise<void>((resolve) => perf.once("exit", () => resolve()));
    const rolesByBlock: Array<Map<string, Map<string, Role>>> = [];
    /** What the client saw of each call (ms), per scenario and arm. */
    const clientMs = new Map<string, number[]>();
    try {
      await untilTraced(file, () => callExpert(arms.product, "no_tools", "hi"));
      // Rounds of one call per arm, each round in the next of the six orders, so every arm meets
      // the machine's moments as the others do; a block of rounds between two marks.
      for (const scenario of TOOL_STEP_SCENARIOS) {
        for (let turn = 0; turn < calls; turn++) {
          if (turn % ROUNDS_PER_BLOCK === 0) mark();
          for (const arm of ORDERS[turn % ORDERS.length] ?? ARMS) {
            const seen = clientMs.get(`${scenario.expert} ${arm}`) ?? [];
            clientMs.set(`${scenario.expert} ${arm}`, seen);
            const started = performance.now();
            await callExpert(arms[arm], scenario.expert, scenario.query);
            seen.push(performance.now() - started);
          }
          if ((turn + 1) % ROUNDS_PER_BLOCK === 0 || turn === calls - 1) {
            rolesByBlock.push(new Map(await Promise.all(pids.map(async (pid) => [pid, await socketRoles(pid, ctx)] as const))));
          }
        }
      }
      mark();
    } finally {
      // perf writes out its buffers on SIGINT; one that does not end within 10 s is killed.
      perf.kill("SIGINT");
      const stuck = setTimeout(() => perf.kill("SIGKILL"), 10_000);
      await exited;
      clearTimeout(stuck);
      closeSync(marker);
    }
    const events = parseTrace(await readFile(file, "utf8"), { benchPid, markerFd: String(marker), rolesByBlock });
    const loadEnd = loadNow();
    console.error(`[bench] TL: ${calls} calls of each expert per arm; 1-min load ${loadStart} → ${loadEnd}; medians in ms from the request's read`);
    const figures: Figure[] = [];
    for (const scenario of TOOL_STEP_SCENARIOS) {
      // Each arm's calls are its own workerd's: the product's and E's commit (fsync), D's do not.
      const product = segments(callsOf(events.get(productPid) ?? [], scenario.toolSteps + 1, true));
      const d = segments(callsOf(events.get(dPid) ?? [], scenario.toolSteps + 1, false));
      const e = segments(callsOf(events.get(ePid) ?? [], scenario.toolSteps + 1, true));
      const row = (name: Exclude<keyof Segments, "pattern" | "calls">) => `${name} ${round(product[name])} / ${round(d[name])} / ${round(e[name])}`;
      // The rest of what the client waited: wrangler's entry workerd in front, loopback, and the client's own work.
      const client = (arm: Arm) => median(clientMs.get(`${scenario.expert} ${arm}`) ?? []);
      const outside = (arm: Arm, inside: Segments) => client(arm) - inside.total;
      console.error(`[bench] TL ${scenario.expert} (product ${product.calls}, D ${d.calls}, E ${e.calls} calls):`);
      for (const arm of [["product", product] as const, ["D", d] as const, ["E", e] as const]) console.error(`    ${arm[0].padEnd(8)} ${arm[1].pattern}`);
      figures.push({
        id: `TL ${scenario.expert}`,
        title: `where a ${scenario.expert} call's wall time goes, medians in ms (product / D / E), from its syscalls traced by perf`,
        value:
          `${row("total")}; ${row("front")} (request read → first model request, the start commit included); ` +
          `${row("modelWait")} (the fake model); ${row("steps")} (first model answer → last model request: the tool steps); ` +
          `${row("end")} (last model answer → answer written, the end commit included); ` +
          `outside the Worker's workerd ${round(outside("product", product))} / ${round(outside("d", d))} / ${round(outside("e", e))} ` +
          `(the client's p50 ${round(client("product"))} / ${round(client("d"))} / ${round(client("e"))} less the total: wrangler's entry workerd, loopback, the client); ` +
          `product − E: front ${signed(product.front - e.front)} ms, steps ${signed(product.steps - e.steps)} ms, end ${signed(product.end - e.end)} ms, ` +
          `outside ${signed(outside("product", product) - outside("e", e))} ms`,
        target: "(breakdown)",
        pass: null,
        details: { product, d, e, clientMs: { product: client("product"), d: client("d"), e: client("e") }, calls, load: `${loadStart} → ${loadEnd}` },
      });
    }
    return figures;
  } finally {
    await Promise.allSettled(clients.map((client) => client.close()));
    await Promise.allSettled(floors.map((started) => started.stop()));
    if (process.env.BENCH_TL_KEEP === undefined) await rm(dir, { recursive: true, force: true });
    else console.error(`[bench] TL trace kept in ${dir}`);
  }
}

/** Calls `probe` until the trace file shows events (perf attaches asynchronously); bounded in count. */
async function untilTraced(file: string, probe: () => Promise<unknown>): Promise<void> {
  for (let attempt = 0; attempt < 200; attempt++) {
    await probe();
    const text = await readFile(file, "utf8").catch(() => "");
    if (/workerd\/\d+ sendto\(/.test(text)) return;
  }
  throw new Error("perf trace recorded nothing after 200 calls: is tracing permitted here (perf_event_paranoid)?");
}

/**
 * Each socket of a workerd by what is at its other end: the fake model, the echo server (its
 * tool calls), or a client (wrangler's entry workerd, forwarding the MCP requests), from the
 * process's fd links and its /proc/<pid>/net/tcp table.
 */
async function socketRoles(pid: string, ctx: BenchContext): Promise<Map<string, Role>> {
  const modelPort = Number(new URL(ctx.fake.baseURL).port);
  const echoPort = Number(new URL(ctx.echoBase).port);
  const remotePortByInode = new Map<string, number>();
  for (const table of ["tcp", "tcp6"]) {
    const text = await readFile(`/proc/${pid}/net/${table}`, "utf8").catch(() => "");
    for (const line of text.split("\n").slice(1)) {
      const fields = line.trim().split(/\s+/);
      const remote = fields[2];
      const inode = fields[9];
      if (remote === undefined || inode === undefined) continue;
      remotePortByInode.set(inode, Number.parseInt(remote.split(":")[1] ?? "", 16));
    }
  }
  const roles = new Map<string, Role>();
  for (const fd of await readdir(`/proc/${pid}/fd`).catch(() => [] as string[])) {
    const inode = /^socket:\[(\d+)\]$/.exec(await readlink(`/proc/${pid}/fd/${fd}`).catch(() => ""))?.[1];
    const port = inode === undefined ? undefined : remotePortByInode.get(inode);
    if (port === undefined) continue;
    roles.set(fd, port === modelPort ? "model" : port === echoPort ? "tool" : "client");
  }
  return roles;
}
