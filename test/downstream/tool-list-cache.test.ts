import { env } from "cloudflare:test";
import { afterEach, describe, expect, it } from "vitest";
import { DownstreamPool } from "../../src/downstream/downstream-pool";
import { ToolListCache, toolListTtlMs } from "../../src/downstream/tool-list-cache";
import { serverConfigHash } from "../../src/downstream/config-hash";
import { downstreamToolsKey } from "../../src/storage-keys";
import { readFixtureStats } from "../fixtures/fixture-stats-client";
import { echoBase, serverConfig, uniqueSkill } from "./downstream-test-helpers";

describe("tool list cache", () => {
  const pools: DownstreamPool[] = [];
  afterEach(async () => {
    await Promise.all(pools.splice(0).map((open) => open.close()));
  });
  function newPool(skill: string, url: string, now: () => number = Date.now, ttl = 300_000): DownstreamPool {
    const open = new DownstreamPool({ env, skill, servers: { echo: serverConfig({ url, tool_list_ttl_ms: ttl }) }, now });
    pools.push(open);
    return open;
  }

  it("a warm pool lists once; a new pool of the same skill reads KV instead of listing", async () => {
    const base = echoBase("warm");
    const skill = uniqueSkill("warm");
    const first = newPool(skill, `${base}/mcp`);
    const listed = await first.listTools("echo");
    expect(await first.listTools("echo")).toBe(listed);
    expect((await readFixtureStats(base)).toolsList).toBe(1);

    const second = newPool(skill, `${base}/mcp`);
    expect((await second.listTools("echo")).map((tool) => tool.name)).toEqual(listed.map((tool) => tool.name));
    const stats = await readFixtureStats(base);
    expect(stats.toolsList).toBe(1);
    // Reading the cache needs no connection at all.
    expect(stats.initialize).toBe(1);
    expect(second.states().echo).toEqual({ status: "idle" });
  });

  it("concurrent first calls share one listing", async () => {
    const base = echoBase("concurrent");
    const open = newPool(uniqueSkill("concurrent"), `${base}/mcp`);
    await Promise.all([open.listTools("echo"), open.listTools("echo"), open.listTools("echo")]);
    const stats = await readFixtureStats(base);
    expect(stats.toolsList).toBe(1);
    expect(stats.initialize).toBe(1);
  });

  it("lists again once the TTL has passed, in memory and in KV (shorter than KV's 60 s floor)", async () => {
    const base = echoBase("ttl");
    const skill = uniqueSkill("ttl");
    let clock = 1_000_000_000_000;
    const now = () => clock;
    const open = newPool(skill, `${base}/mcp`, now, 5_000);
    await open.listTools("echo");
    clock += 4_000;
    await open.listTools("echo");
    expect((await readFixtureStats(base)).toolsList).toBe(1);
    clock += 2_000;
    await open.listTools("echo");
    expect((await readFixtureStats(base)).toolsList).toBe(2);

    // A fresh pool after expiry does not trust the KV entry either.
    clock += 6_000;
    await newPool(skill, `${base}/mcp`, now, 5_000).listTools("echo");
    expect((await readFixtureStats(base)).toolsList).toBe(3);
  });

  it("a changed server config is a cache miss", async () => {
    const base = echoBase("config");
    const skill = uniqueSkill("config");
    await newPool(skill, `${base}/mcp`).listTools("echo");
    await newPool(skill, `${base}/mcp`, Date.now, 120_000).listTools("echo");
    expect((await readFixtureStats(base)).toolsList).toBe(2);
  });

  it("ignores a malformed KV entry and asks the server", async () => {
    const base = echoBase("malformed");
    const skill = uniqueSkill("malformed");
    const config = serverConfig({ url: `${base}/mcp`, tool_list_ttl_ms: 300_000 });
    const key = downstreamToolsKey(skill, "echo", await serverConfigHash(config));
    await env.CACHE.put(key, JSON.stringify({ tools: [{ name: 42 }], fetchedAt: 0, expiresAt: Date.now() + 60_000 }));
    const open = new DownstreamPool({ env, skill, servers: { echo: config } });
    pools.push(open);
    expect((await open.listTools("echo")).map((tool) => tool.name)).toContain("echo");
    expect((await readFixtureStats(base)).toolsList).toBe(1);
  });

  it("a TTL of 0 never caches", async () => {
    const base = echoBase("nocache");
    const open = newPool(uniqueSkill("nocache"), `${base}/mcp`, Date.now, 0);
    await open.listTools("echo");
    await open.listTools("echo");
    expect((await readFixtureStats(base)).toolsList).toBe(2);
  });

  it("takes the server's ttlMs when it is shorter than the configured TTL", () => {
    const config = serverConfig({ url: "https://example.com/mcp", tool_list_ttl_ms: 60_000 });
    expect(toolListTtlMs(config, 5_000)).toBe(5_000);
    expect(toolListTtlMs(config, 600_000)).toBe(60_000);
    expect(toolListTtlMs(config, undefined)).toBe(60_000);
    expect(toolListTtlMs(config, "soon")).toBe(60_000);
  });

  it("stores an explicit expiry and refuses an expired entry on read", async () => {
    let clock = 2_000_000_000_000;
    const cache = new ToolListCache(env.CACHE, uniqueSkill("expiry"), () => clock);
    const config = serverConfig({ url: "https://example.com/mcp" });
    const tool = { name: "t", inputSchema: { type: "object" as const } };
    const written = await cache.write("srv", config, [tool], 10_000);
    expect(written.expiresAt).toBe(clock + 10_000);
    expect((await cache.read("srv", config))?.tools).toEqual([tool]);
    clock += 10_000;
    expect(await cache.read("srv", config)).toBeUndefined();
  });
});
