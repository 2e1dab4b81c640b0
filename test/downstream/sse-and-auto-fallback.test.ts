import { afterEach, describe, expect, it } from "vitest";
import type { DownstreamPool } from "../../src/downstream/downstream-pool";
import { readFixtureStats } from "../fixtures/fixture-stats-client";
import { echoBase, firstText, pool, serverConfig, sseBase } from "./downstream-test-helpers";

describe("legacy SSE and auto transport", () => {
  let open: DownstreamPool | undefined;
  afterEach(async () => {
    await open?.close();
  });

  it("talks to an SSE-only server, each response delivered once", async () => {
    const base = sseBase("sse");
    open = pool({ legacy: serverConfig({ url: `${base}/sse`, transport: "sse" }) });
    expect((await open.listTools("legacy")).map((tool) => tool.name)).toContain("echo");
    const results = await Promise.all(["a", "b", "c"].map((text) => open!.callTool("legacy", "echo", { text })));
    expect(results.map(firstText)).toEqual(["a", "b", "c"]);
    expect((await open.callTool("legacy", "add", { a: 1, b: 2 })).structuredContent).toEqual({ sum: 3 });

    const stats = await readFixtureStats(base);
    expect(stats.calls).toEqual({ echo: 3, add: 1 });
    expect(open.states().legacy).toMatchObject({ status: "ready", transport: "sse" });
  });

  it("auto falls back to SSE when the URL refuses Streamable HTTP", async () => {
    const base = sseBase("auto-sse");
    open = pool({ legacy: serverConfig({ url: `${base}/sse`, transport: "auto" }) });
    expect(firstText(await open.callTool("legacy", "echo", { text: "via fallback" }))).toBe("via fallback");
    expect(open.states().legacy).toMatchObject({ status: "ready", transport: "sse" });
    expect((await readFixtureStats(base)).calls).toEqual({ echo: 1 });
  });

  it("auto keeps Streamable HTTP when the server speaks it", async () => {
    const base = echoBase("auto-http");
    open = pool({ echo: serverConfig({ url: `${base}/mcp`, transport: "auto" }) });
    expect(firstText(await open.callTool("echo", "echo", { text: "direct" }))).toBe("direct");
    expect(open.states().echo).toMatchObject({ status: "ready", transport: "streamable-http" });
  });

  it("a Streamable HTTP config pointed at an SSE-only URL fails instead of falling back", async () => {
    open = pool({ legacy: serverConfig({ url: `${sseBase("strict")}/sse`, transport: "streamable-http" }) });
    await expect(open.listTools("legacy")).rejects.toMatchObject({ kind: "downstream-unavailable", serverId: "legacy" });
  });
});
