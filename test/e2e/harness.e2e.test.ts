import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectMcpClient, runInspectorCli, type McpClientKind } from "./harness/mcp-clients";
import { isLiveProcess, listProcessGroup } from "./harness/process-group";
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
    workerd = listProcessGroup(dev.pgid).filter((m) => m.command.includes("workerd")).map((m) => m.pid);
  });
  afterAll(async () => {
    await dev.stop();
  });

  it("runs wrangler dev with its two workerd processes in the harness's own process group", async () => {
    expect(workerd.length).toBeGreaterThanOrEqual(2);
    const response = await fetch(`${dev.baseUrl}/healthz`);
    await response.arrayBuffer();
    expect(response.status).toBeGreaterThanOrEqual(200);
    expect(dev.startupMs).toBeLessThan(30_000);
  });

  for (const kind of ["v2-2025", "v2-2025-06-18", "v2-2026", "v1-http"] as const) {
    it(`connects the ${kind} MCP client and lists tools`, async () => {
      const client = await connectMcpClient(kind, `${dev.baseUrl}/mcp`);
      try {
        if (expectedVersion[kind]) expect(client.protocolVersion).toBe(expectedVersion[kind]);
        const tools = await client.listTools();
        expect(Array.isArray(tools)).toBe(true);
        expect(tools.every((tool) => typeof tool.name === "string")).toBe(true);
      } finally {
        await client.close();
      }
    });
  }

  it("runs the MCP Inspector CLI against the Worker", async () => {
    const listed = await runInspectorCli([`${dev.baseUrl}/mcp`, "--transport", "http", "--method", "tools/list"]);
    expect(listed).toHaveProperty("tools");
  });

  it("stop() ends wrangler and every workerd process, and nothing else", async () => {
    const pgid = dev.pgid;
    await dev.stop();
    expect(listProcessGroup(pgid)).toEqual([]);
    expect(workerd.filter(isLiveProcess)).toEqual([]);
  });
});
