import { afterEach, describe, expect, it } from "vitest";
import type { DownstreamPool } from "../../src/downstream/downstream-pool";
import { readFixtureStats } from "../fixtures/fixture-stats-client";
import { echoBase, firstText, pool, serverConfig } from "./downstream-test-helpers";

describe("Streamable HTTP downstream", () => {
  let open: DownstreamPool | undefined;
  afterEach(async () => {
    await open?.close();
  });

  it("lists and calls tools on a real Streamable HTTP server", async () => {
    const base = echoBase("streamable");
    open = pool({ echo: serverConfig({ url: `${base}/mcp`, transport: "streamable-http" }) });

    const tools = await open.listTools("echo");
    expect(tools.map((tool) => tool.name).sort()).toEqual(["add", "big", "echo", "erase", "fail", "sleep", "whoami"]);
    const result = await open.callTool("echo", "echo", { text: "hello" });
    expect(firstText(result)).toBe("hello");
    const sum = await open.callTool("echo", "add", { a: 2, b: 3 });
    expect(sum.structuredContent).toEqual({ sum: 5 });

    const stats = await readFixtureStats(base);
    expect(stats.calls).toEqual({ echo: 1, add: 1 });
    expect(stats.toolsList).toBe(1);
    expect(open.states().echo).toMatchObject({ status: "ready", transport: "streamable-http" });
  });

  it("probes server/discover and falls back to initialize on a 2025 server", async () => {
    const base = echoBase("negotiate");
    open = pool({ echo: serverConfig({ url: `${base}/mcp`, transport: "streamable-http" }) });
    await open.callTool("echo", "echo", { text: "x" });
    const stats = await readFixtureStats(base);
    expect(stats.discover).toBe(1);
    expect(stats.initialize).toBe(1);
    expect(open.states().echo).toMatchObject({ status: "ready", protocolVersion: expect.stringMatching(/^2025-/) });
  });

  it("returns an isError result as a result, not a thrown error", async () => {
    open = pool({ echo: serverConfig({ url: `${echoBase("fail")}/mcp` }) });
    const result = await open.callTool("echo", "fail", { message: "nope" });
    expect(result.isError).toBe(true);
    expect(firstText(result)).toBe("nope");
    expect(open.states().echo?.status).toBe("ready");
  });
});
