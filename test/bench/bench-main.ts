import { startFixtureServers } from "../fixtures/fixture-servers";
import { taggedBase } from "../fixtures/fixture-stats-client";
import { loadCatalog } from "../e2e/harness/catalog-admin";
import { startFakeOpenAI } from "../e2e/harness/fake-openai-server";
import { snapshotProject } from "../e2e/harness/project-snapshot";
import { startWranglerDev } from "../e2e/harness/wrangler-dev";
import { benchCatalog } from "./bench-catalog";
import { createConnector, type BenchContext, type Figure } from "./bench-context";
import { benchModelScript } from "./bench-model-script";
import { measureExpertBreakdown } from "./figures/expert-breakdown";
import { measureEvals } from "./figures/evals";
import { measureAgainstRevision } from "./figures/ab-revision";
import { measureCpuProfile } from "./figures/cpu-profile";
import { measureCallTimeline } from "./figures/call-timeline";
import { measureCpuPerCall } from "./figures/cpu-per-call";
import { measureFloor } from "./figures/f0-floor";
import { measureConnections } from "./figures/c1-connections";
import { measureFloorGoals } from "./figures/floor-goals";
import { measureLibraryFloorProfile } from "./figures/library-floor-profile";
import { measureDownstreamOverhead } from "./figures/m1-downstream-overhead";
import { measureFixedCost } from "./figures/m2-fixed-cost";
import { measureToolLists } from "./figures/m3-tool-lists";
import { measureFanOut } from "./figures/m4-fan-out";
import { measureReinitialisation } from "./figures/m5-reinit";
import { measureContext } from "./figures/m6-context";
import { measurePrefixShare } from "./figures/prefix-share";
import { measureRunIndexList } from "./figures/run-index-list";
import { measureSizeAndStart } from "./figures/m7-size-start";
import { measureThroughput } from "./figures/throughput";
import { startManyToolsServers } from "./many-tools-server";
import { loadNow, machineInfo, renderMarkdown, writeResults, type BenchRun } from "./results-report";
import { summarize } from "./sample-stats";

/**
 * `--quick` runs few samples (a smoke run of the bench itself); the default is the full run.
 * `--only=F0,M3` runs some figures; `--no-write` prints without touching RESULTS.*.
 */
function sizesFrom(args: string[]) {
  return args.includes("--quick") ? { samples: 20, warmup: 3, maxMs: 30_000 } : { samples: 200, warmup: 20, maxMs: 60_000 };
}

export async function runBenchmark(args: string[]): Promise<void> {
  const started = performance.now();
  const loadAtStart = loadNow();
  const sizes = sizesFrom(args);
  const fixtures = await startFixtureServers();
  const wide = await startManyToolsServers();
  const fake = await startFakeOpenAI({ script: benchModelScript, record: false });
  const project = await snapshotProject();
  const dev = await startWranglerDev({ readyTimeoutMs: 60_000, projectDir: project.dir }).catch(async (error: unknown) => {
    await Promise.allSettled([fake.close(), fixtures.stop(), project.remove(), ...wide.map((s) => s.stop())]);
    throw error;
  });
  const figures: Figure[] = [];
  const failures: BenchRun["failures"] = [];
  try {
    const echoBase = taggedBase(fixtures.urls.echo, "bench");
    const echoMcpUrl = `${echoBase}/mcp`;
    const catalog = benchCatalog(echoMcpUrl, wide, fake.baseURL);
    const ctx: BenchContext = {
      dev,
      projectDir: project.dir,
      fake,
      echoBase,
      echoMcpUrl,
      wide,
      kind: "v2-2025",
      sizes,
      catalog,
      connect: createConnector(dev.baseUrl, "v2-2025"),
      reloadCatalog: async (generation) => {
        const wideSkill = catalog.skills.wide;
        await loadCatalog(dev.baseUrl, { ...catalog, skills: { ...catalog.skills, wide: { ...wideSkill, description: `generation ${generation}` } } });
      },
    };
    await loadCatalog(dev.baseUrl, catalog);
    const only = args
      .find((arg) => arg.startsWith("--only="))
      ?.slice("--only=".length)
      .split(",");
    const step = async (name: string, run: () => Promise<Figure[]>) => {
      if (only && !only.includes(name)) return;
      const t = performance.now();
      try {
        figures.push(...(await run()));
      } catch (error) {
        failures.push({ figure: name, error: error instanceof Error ? error.message : String(error) });
        console.error(`[bench] ${name} failed; wrangler dev log tail:\n${dev.logs().split("\n").slice(-25).join("\n")}`);
      }
      console.error(`[bench] ${name} done in ${Math.round((performance.now() - t) / 1000)} s`);
    };
    await step("F0", () => measureFloor(ctx));
    // Issue 21's goals as ratios to the bench's own bare Worker (test/bench/floor/), same run.
    await step("Goals", () => measureFloorGoals(ctx));
    let directEcho = summarize([]);
    await step("M1", async () => {
      const m1 = await measureDownstreamOverhead(ctx);
      directEcho = m1.directEcho;
      return m1.figures;
    });
    await step("M2", () => measureFixedCost(ctx, directEcho));
    await step("B", () => measureExpertBreakdown(ctx));
    await step("M3", () => measureToolLists(ctx));
    await step("M4", () => measureFanOut(ctx));
    await step("M5", () => measureReinitialisation(ctx));
    await step("M6", () => measureContext(ctx));
    await step("Throughput", () => measureThroughput(ctx));
    await step("M7", () => measureSizeAndStart(ctx));
    await step("CPU", () => measureCpuPerCall(ctx));
    await step("Runs", () => measureRunIndexList(ctx));
    // Its own wrangler dev beside the SDK's OAuth example server (connected vs static header).
    await step("C1", () => measureConnections(ctx));
    // It loads a skill of its own with evals, then the bench's catalog again.
    await step("Evals", () => measureEvals(ctx));
    // Last: it loads a catalog with a skill of its own, then the bench's catalog again.
    await step("Prefix", () => measurePrefixShare(ctx));
    // Not part of a default run: `--only=P` profiles the isolate during a loop of expert calls.
    if (only?.includes("P")) await step("P", () => measureCpuProfile(ctx));
    // `--only=PD`: the product's and library floor D's isolates profiled at once, their difference by module and function.
    if (only?.includes("PD")) await step("PD", () => measureLibraryFloorProfile(ctx));
    // `--only=TL`: a call's wall time cut into segments at its syscalls (perf trace), product beside floors D and E.
    if (only?.includes("TL")) await step("TL", () => measureCallTimeline(ctx));
    // `--only=AB --ab=<rev>[,<rev>…]`: this tree against each committed revision in turn, interleaved.
    const abRevs = args
      .find((arg) => arg.startsWith("--ab="))
      ?.slice("--ab=".length)
      .split(",") ?? ["HEAD"];
    if (only?.includes("AB")) for (const rev of abRevs) await step("AB", () => measureAgainstRevision(ctx, rev));
  } finally {
    await dev.stop();
    await Promise.allSettled([fake.close(), fixtures.stop(), project.remove(), ...wide.map((s) => s.stop())]);
  }
  const run: BenchRun = {
    date: new Date().toISOString(),
    machine: { ...machineInfo(), loadAverage: { start: loadAtStart, end: loadNow() } },
    settings: { ...sizes, client: "MCP SDK v2 Client, 2025 handshake, Streamable HTTP" },
    durationS: (performance.now() - started) / 1000,
    figures,
    failures,
  };
  const markdown = renderMarkdown(run);
  console.log(markdown);
  if (args.includes("--no-write")) return;
  const paths = await writeResults(run);
  console.error(`[bench] wrote ${paths.md} and ${paths.json}`);
}
