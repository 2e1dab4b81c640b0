/**
 * Dashboard pages with 10,000 runs in the run index: p50 server render time (measured from
 * outside, over wrangler dev on loopback), page weight in bytes, and the requests a browser makes
 * to show the page. Run with `npm run bench:dashboard` (not part of `npm run bench`).
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { launchChromium } from "../e2e/harness/chromium-browser";
import { runWrangler } from "../e2e/harness/wrangler-command";
import { startWranglerDev } from "../e2e/harness/wrangler-dev";
import { startFixtureServers } from "../fixtures/fixture-servers";
import { loadCatalog } from "../e2e/harness/catalog-admin";
import { startFakeOpenAI, textReply, toolCallsReply, toolResultMessages } from "../e2e/harness/fake-openai-server";
import { connectMcpClient } from "../e2e/harness/mcp-clients";

const RUNS = 10_000;
/** The run page is measured on a real run of this many steps (one echo call each, then the answer). */
const TRACE_STEPS = 20;
const SAMPLES = 30;
const OUTCOMES = ["ok", "ok", "ok", "ok", "ok", "ok", "error", "budget_exhausted"];

function seedSql(now: number): string {
  const lines: string[] = [];
  for (let index = 0; index < RUNS; index += 1) {
    const started = now - Math.floor((index * 7 * 86_400_000) / RUNS);
    const id = `00000000-0000-4000-8000-${String(index).padStart(12, "0")}`;
    const outcome = OUTCOMES[index % OUTCOMES.length];
    const elapsed = 200 + ((index * 37) % 1800);
    lines.push(
      `INSERT INTO run_index VALUES ('${id}','default','expert_${index % 6}','dev-user${index % 25}','user${index % 25}',NULL,NULL,1,'openai-compatible','fake-cheap','${outcome}','${"0".repeat(31)}1',${started},${started + elapsed},${elapsed},2,${100 + (index % 400)},${20 + (index % 90)},1,${index % 13 === 0 ? 1 : 0},512,${index % 3 === 0 ? "NULL" : "0.0004"},${outcome === "budget_exhausted" ? "'steps'" : "NULL"},${index % 50 === 0 ? 1 : 0});`,
    );
    lines.push(
      `INSERT INTO run_tool_calls VALUES ('${id}',0,'default','fx','echo','${index % 13 === 0 ? "error" : "ok"}',${elapsed >> 2},512,${index % 13 === 0 ? "'boom'" : "NULL"},${started + elapsed});`,
    );
  }
  return lines.join("\n");
}

function p50(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.ceil(sorted.length / 2) - 1] ?? Number.NaN;
}

/** One real expert run of TRACE_STEPS steps through the fake model and the fixture server; its run page path once indexed. */
async function tracedRunPage(baseUrl: string, fixtureEcho: string, modelURL: string): Promise<string> {
  await loadCatalog(baseUrl, {
    skills: {
      default: {
        servers: { fx: { url: `${fixtureEcho}/mcp`, transport: "streamable-http" } },
        experts: [
          {
            name: "bench_trace",
            description: "Calls echo once a step.",
            internal_tools: { fx: ["echo"] },
            provider: "openai-compatible",
            base_url: modelURL,
            model: "fake-cheap",
            budget: { max_steps: TRACE_STEPS, max_tool_calls: TRACE_STEPS, timeout_ms: 60_000 },
          },
        ],
      },
    },
  });
  const client = await connectMcpClient("v2-2025", `${baseUrl}/mcp`);
  try {
    await client.callTool("bench_trace", { query: "go" });
  } finally {
    await client.close();
  }
  for (let attempt = 0; attempt < 60; attempt += 1) {
    const list = await (await fetch(`${baseUrl}/admin/runs?expert=bench_trace`)).text();
    const id = /aria-label="Run ([0-9a-f-]{36})"/.exec(list)?.[1];
    if (id) return `/admin/runs/${id}`;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  throw new Error("the traced run was never indexed");
}

export async function runDashboardBench(): Promise<void> {
  const dev = await startWranglerDev();
  const fixtures = await startFixtureServers();
  const model = await startFakeOpenAI({
    script: (request) =>
      toolResultMessages(request).length >= TRACE_STEPS - 1 ? textReply("done") : toolCallsReply({ name: "fx__echo", arguments: { text: "step" } }),
  });
  try {
    const tracePage = await tracedRunPage(dev.baseUrl, fixtures.urls.echo, model.baseURL);
    const file = join(dev.persistDir, "seed.sql");
    await writeFile(file, seedSql(Date.now()));
    const seeded = await runWrangler(["d1", "execute", "DB", "--local", "--persist-to", dev.persistDir, "--file", file, "--yes"], { timeoutMs: 180_000 });
    if (seeded.code !== 0) throw new Error(`seeding failed: ${seeded.output.slice(-2000)}`);
    const browser = await launchChromium();
    const results: Record<string, unknown>[] = [];
    try {
      for (const path of ["/admin", "/admin/runs", tracePage]) {
        const times: number[] = [];
        let bytes = 0;
        for (let sample = 0; sample < SAMPLES; sample += 1) {
          const started = performance.now();
          const response = await fetch(`${dev.baseUrl}${path}`);
          const body = await response.arrayBuffer();
          times.push(performance.now() - started);
          if (!response.ok) throw new Error(`${path} answered ${response.status}`);
          bytes = body.byteLength;
        }
        const page = await browser.newPage();
        let requests = 0;
        page.on("request", () => {
          requests += 1;
        });
        await page.goto(`${dev.baseUrl}${path}`, { waitUntil: "load" });
        await page.close();
        results.push({
          path: path === tracePage ? `/admin/runs/<${TRACE_STEPS}-step run>` : path,
          runs: RUNS,
          samples: SAMPLES,
          p50Ms: Number(p50(times).toFixed(1)),
          maxMs: Number(Math.max(...times).toFixed(1)),
          htmlBytes: bytes,
          browserRequests: requests,
        });
      }
    } finally {
      await browser.close();
    }
    console.log(JSON.stringify(results, null, 2));
  } finally {
    await Promise.allSettled([dev.stop(), fixtures.stop(), model.close()]);
  }
}
