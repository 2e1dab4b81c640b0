import type { BenchContext, Figure } from "../bench-context";
import { round, summarize } from "../sample-stats";

/** A stateless tools/list as one plain POST (2025-06-18, no session), without any SDK client. */
async function rawToolsList(baseUrl: string): Promise<void> {
  const response = await fetch(`${baseUrl}/mcp`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2025-06-18",
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }),
  });
  const text = await response.text();
  if (!response.ok || !text.includes('"tools"')) throw new Error(`raw tools/list answered ${response.status}: ${text.slice(0, 300)}`);
}

/**
 * F0: the floor under every other figure, measured in the same run: GET /healthz (wrangler dev's
 * proxy, workerd entry, the Hono router) and one tools/list as a bare POST (plus the MCP
 * surface: skill lookup, a fresh McpServer, JSON-RPC), interleaved.
 */
export async function measureFloor(ctx: BenchContext): Promise<Figure[]> {
  const healthz: number[] = [];
  const list: number[] = [];
  const time = async (into: number[], run: () => Promise<unknown>) => {
    const started = performance.now();
    await run();
    into.push(performance.now() - started);
  };
  const health = async () => {
    const response = await fetch(`${ctx.dev.baseUrl}/healthz`);
    await response.arrayBuffer();
  };
  for (let i = 0; i < ctx.sizes.warmup; i++) await Promise.all([health(), rawToolsList(ctx.dev.baseUrl)]);
  const deadline = performance.now() + ctx.sizes.maxMs;
  for (let i = 0; i < ctx.sizes.samples && performance.now() < deadline; i++) {
    await time(healthz, health);
    await time(list, () => rawToolsList(ctx.dev.baseUrl));
  }
  const h = summarize(healthz);
  const l = summarize(list);
  return [
    {
      id: "F0 healthz",
      title: "GET /healthz through wrangler dev (floor: proxy + workerd + router)",
      value: `${round(h.p50)} ms p50 (p99 ${round(h.p99)})`,
      target: "(floor)",
      pass: null,
      details: { healthz: h },
    },
    {
      id: "F0 tools/list",
      title: "tools/list as one bare POST, no client SDK",
      value: `${round(l.p50)} ms p50 (p99 ${round(l.p99)}); MCP surface share ${round(l.p50 - h.p50)} ms`,
      target: "(breakdown)",
      pass: null,
      details: { toolsList: l },
    },
  ];
}
