import { createExecutionContext, env } from "cloudflare:test";
import { McpServer } from "@modelcontextprotocol/server";
import { createMcpHandler } from "agents/mcp/server";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { DownstreamPool } from "../../src/downstream/downstream-pool";
import { firstText, serverConfig, uniqueSkill } from "./downstream-test-helpers";

/** A Worker-like MCP server behind a Fetcher, as `env[binding]` would be. */
function mcpFetcher(seen: { hosts: Array<string | null>; authorizations: Array<string | null> }): Fetcher {
  const handler = createMcpHandler(
    () => {
      const server = new McpServer({ name: "bound", version: "1.0.0" });
      server.registerTool("shout", { inputSchema: z.object({ text: z.string() }) }, ({ text }) => ({
        content: [{ type: "text", text: text.toUpperCase() }],
      }));
      return server;
    },
    { route: "/tools/mcp" },
  );
  const fetcher = {
    fetch: async (input: RequestInfo | URL, init?: RequestInit) => {
      const request = new Request(input, init);
      seen.hosts.push(request.headers.get("host"));
      seen.authorizations.push(request.headers.get("authorization"));
      return handler(request, env, createExecutionContext());
    },
  };
  return fetcher as unknown as Fetcher;
}

describe("service binding downstream", () => {
  let open: DownstreamPool | undefined;
  afterEach(async () => {
    await open?.close();
  });

  it("reaches a createMcpHandler server through env[binding] with a Host header", async () => {
    const seen = { hosts: [] as Array<string | null>, authorizations: [] as Array<string | null> };
    open = new DownstreamPool({
      env: Object.assign({}, env, { TOOLS_WORKER: mcpFetcher(seen) }),
      skill: uniqueSkill("binding"),
      servers: { bound: serverConfig({ binding: "TOOLS_WORKER", url: "https://tools.internal/tools/mcp" }) },
    });
    expect((await open.listTools("bound")).map((tool) => tool.name)).toEqual(["shout"]);
    expect(firstText(await open.callTool("bound", "shout", { text: "hi" }))).toBe("HI");
    expect(open.states().bound).toMatchObject({ status: "ready", transport: "binding" });
    expect(seen.hosts.length).toBeGreaterThan(0);
    expect(new Set(seen.hosts)).toEqual(new Set(["tools.internal"]));
    expect(seen.authorizations.every((value) => value === null)).toBe(true);
  });

  it("a binding the Worker lacks is reported with the wrangler.toml fix", async () => {
    open = new DownstreamPool({
      env,
      skill: uniqueSkill("nobinding"),
      servers: { bound: serverConfig({ binding: "NOT_A_BINDING" }) },
    });
    const error = await open.listTools("bound").catch((caught: unknown) => caught);
    expect(error).toMatchObject({ kind: "downstream-unavailable", serverId: "bound" });
    expect((error as { fix: string }).fix).toContain('binding = "NOT_A_BINDING"');
  });
});
