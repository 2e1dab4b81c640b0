import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadCatalog } from "./harness/catalog-admin";
import { connectMcpClient, runInspectorCli, type McpClientKind } from "./harness/mcp-clients";
import { isLiveProcess, listProcessGroup } from "./harness/process-group";
import { wranglerCli } from "./harness/wrangler-command";
import { startWranglerDev, type WranglerDev } from "./harness/wrangler-dev";

const expectedVersion: Partial<Record<McpClientKind, string>> = {
  "v2-2025": "2025-11-25",
  "v2-2025-06-18": "2025-06-18",
  "v2-2026": "2026-07-28",
};

describe("e2e harness against wrangler dev", () => {
  let dev: WranglerDev;
  let workerd: number[] = [];
  beforeAll(async () => {
    dev = await startWranglerDev();
    workerd = listProcessGroup(dev.pgid)
      .filter((m) => m.command.includes("workerd"))
      .map((m) => m.pid);
    await loadCatalog(dev.baseUrl, {
      skills: {
        default: {
          experts: [
            {
              name: "hello_expert",
              description: "Says hello; no downstream servers.",
              provider: "openai-compatible",
              base_url: "http://127.0.0.1:9/v1",
              model: "unused",
            },
          ],
        },
      },
    });
  });
  afterAll(async () => {
    await dev.stop();
  });

  it("runs wrangler dev with its two workerd processes in the harness's own process group", async () => {
    expect(workerd.length).toBeGreaterThanOrEqual(2);
    const response = await fetch(`${dev.baseUrl}/healthz`);
    await response.arrayBuffer();
    expect(response.status).toBeGreaterThanOrEqual(200);
    // Startup time is the figure itself; nothing but the clock measures it.
    expect(dev.startupMs).toBeLessThan(30_000);
  });

  it("runs wrangler dev without its local trace collector, which would double every call's CPU", async () => {
    // The variable the harness sets is the one this wrangler reads: after a rename the collector
    // would be back, unseen, in every figure of the bench (docs/platform-notes.md).
    expect(await readFile(wranglerCli, "utf8")).toContain('variableName: "X_LOCAL_OBSERVABILITY"');
    // With the collector on, miniflare makes its trace store's directory here when it starts.
    expect(existsSync(join(dev.persistDir, "v3", "observability"))).toBe(false);
    // Beside the state it does keep there (the local D1 the harness migrated).
    expect(existsSync(join(dev.persistDir, "v3", "d1"))).toBe(true);
  });

  const clients = [
    ["v2-2025", "/mcp"],
    ["v2-2025-06-18", "/mcp"],
    ["v2-2026", "/mcp"],
    ["v1-http", "/mcp"],
    ["v1-sse", "/sse"],
    ["v2-sse", "/sse"],
  ] as const;
  for (const [kind, path] of clients) {
    it(`connects the ${kind} MCP client to ${path} and lists the loaded catalog's expert`, async () => {
      const client = await connectMcpClient(kind, `${dev.baseUrl}${path}`);
      try {
        if (expectedVersion[kind]) expect(client.protocolVersion).toBe(expectedVersion[kind]);
        const tools = await client.listTools();
        expect(tools.map((tool) => tool.name)).toEqual(["hello_expert"]);
      } finally {
        await client.close();
      }
    });
  }

  it("runs the MCP Inspector CLI against the Worker", async () => {
    const listed = await runInspectorCli([`${dev.baseUrl}/mcp`, "--transport", "http", "--method", "tools/list"]);
    expect(listed).toMatchObject({ tools: [{ name: "hello_expert" }] });
  });

  it("stop() ends wrangler and every workerd process, and nothing else", async () => {
    const pgid = dev.pgid;
    await dev.stop();
    expect(listProcessGroup(pgid)).toEqual([]);
    expect(workerd.filter(isLiveProcess)).toEqual([]);
  });
});
