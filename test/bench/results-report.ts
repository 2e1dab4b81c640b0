import { writeFile } from "node:fs/promises";
import { cpus, loadavg, totalmem, type as osType, release } from "node:os";
import { fileURLToPath } from "node:url";
import type { Figure } from "./bench-context";

export interface BenchRun {
  date: string;
  machine: { cpu: string; cores: number; memoryGiB: number; os: string; node: string; loadAverage?: { start: number; end: number } };
  settings: Record<string, unknown>;
  durationS: number;
  figures: Figure[];
  failures: Array<{ figure: string; error: string }>;
}

/** The 1-minute load average: above the core count, other work competed with the bench for CPU. */
export const loadNow = (): number => Math.round((loadavg()[0] ?? 0) * 100) / 100;

export function machineInfo(): BenchRun["machine"] {
  const cpu = cpus();
  return {
    cpu: cpu[0]?.model ?? "unknown",
    cores: cpu.length,
    memoryGiB: Math.round((totalmem() / 1024 ** 3) * 10) / 10,
    os: `${osType()} ${release()}`,
    node: process.version,
  };
}

const cell = (text: string) => text.replaceAll("|", "\\|").replaceAll("\n", " ");

export function renderMarkdown(run: BenchRun): string {
  const verdict = (pass: boolean | null) => (pass === null ? "—" : pass ? "pass" : "**fail**");
  const goals = run.figures.filter((f) => f.id.startsWith("Goal ") || f.id.startsWith("Floor "));
  const goalRows = goals.map((f) => `| ${cell(f.title)} | ${cell(f.value)} | ${cell(f.target)} | ${verdict(f.pass)} |`);
  const rows = run.figures.map((f) => `| ${f.id} | ${cell(f.title)} | ${cell(f.value)} | ${cell(f.target)} | ${verdict(f.pass)} |`);
  const notes = run.figures.filter((f) => f.note).map((f) => `- **${f.id}**: ${cell(f.note ?? "")}`);
  const failures = run.failures.map((f) => `- **${f.figure}** could not be measured: ${cell(f.error)}`);
  return [
    "# Slipsnisse benchmark results",
    "",
    `Run ${run.date} on ${run.machine.cpu} (${run.machine.cores} cores, ${run.machine.memoryGiB} GiB, ${run.machine.os}), Node ${run.machine.node}; ` +
      `\`wrangler dev --local\`, loopback downstream servers and a zero-latency fake model; took ${Math.round(run.durationS)} s. ` +
      "Regenerate with `npm run bench` (never part of `npm test`).",
    "",
    ...loadLine(run.machine),
    ...(goals.length > 0
      ? [
          "## Goals (issue 21): ratios to the floor, measured in this run",
          "",
          "The floor is the bench's bare Worker (test/bench/floor/, its own `wrangler dev` beside the product's): A `createMcpHandler` with an " +
            "echo tool, B plus a Durable Object hop, C plus the call's N fetches from the object (the fake model's, and each tool step's tools/call " +
            "to the echo server the product calls); D, the library floor, the same expert " +
            "call made in the object with only the required libraries (generateText, the MCP SDK Client), splits each expert row's gap into " +
            "D ÷ C (the libraries') and product ÷ D (ours); E, D with a durable run record (a row before the model call, updated after), " +
            "splits ours into E ÷ D (those two commits) and product ÷ E, which its rows hold to the goal's own target (ours alone: the libraries " +
            "and the commits are E's too). Samples interleaved, every order of the arms in turn, each latency arm in a `wrangler dev` of its own; " +
            "absolute figures beside each ratio. wrangler dev's local trace collector is off in every arm (X_LOCAL_OBSERVABILITY=false). " +
            "Only the ratios are comparable between runs and machines.",
          "",
          "| goal | measured | target | result |",
          "|---|---|---|---|",
          ...goalRows,
          "",
          "## All figures",
          "",
        ]
      : []),
    "| figure | what | value | target | result |",
    "|---|---|---|---|---|",
    ...rows,
    "",
    ...(notes.length > 0 ? ["## Where the time goes", "", ...notes, ""] : []),
    ...(failures.length > 0 ? ["## Not measured", "", ...failures, ""] : []),
    "Latency figures are medians (p50) and p99 over interleaved A/B samples after warm-up, measured from outside by a real MCP client ",
    "(SDK v2, 2025 handshake) on loopback. Compare them with the platform floor in docs/platform-notes.md: `wrangler dev` alone adds several ",
    "milliseconds of proxy and workerd entry before any of our code runs. Machine-readable figures: `RESULTS.json`.",
    "",
  ].join("\n");
}

function loadLine(machine: BenchRun["machine"]): string[] {
  const load = machine.loadAverage;
  if (!load) return [];
  const loaded = Math.max(load.start, load.end) > machine.cores;
  return [
    `1-minute load average ${load.start} at the start and ${load.end} at the end on ${machine.cores} cores` +
      (loaded
        ? ": the machine was loaded by other work during this run, so absolute milliseconds are inflated and noisy; trust ratios measured side by side (interleaved pairs, AB) over absolute values."
        : "."),
    "",
  ];
}

export async function writeResults(run: BenchRun): Promise<{ md: string; json: string }> {
  const md = fileURLToPath(new URL("./RESULTS.md", import.meta.url));
  const json = fileURLToPath(new URL("./RESULTS.json", import.meta.url));
  await writeFile(md, renderMarkdown(run));
  await writeFile(json, `${JSON.stringify(run, null, 2)}\n`);
  return { md, json };
}
