import { env } from "cloudflare:test";
import { afterEach, describe, expect, it } from "vitest";
import { DownstreamPool } from "../../src/downstream/downstream-pool";
import { readFixtureStats } from "../fixtures/fixture-stats-client";
import { echoBase, firstText, fixtures, serverConfig, uniqueSkill } from "./downstream-test-helpers";

/** A binding that forwards to a real fixture server, and can be switched off like a crashed Worker. */
function switchableFetcher(base: string): { fetcher: Fetcher; up: { value: boolean } } {
  const up = { value: true };
  const fetcher = {
    fetch: async (input: RequestInfo | URL, init?: RequestInit) => {
      if (!up.value) throw new TypeError("Network connection lost.");
      const request = new Request(input, init);
      return fetch(new Request(`${base}${new URL(request.url).pathname}`, request));
    },
  };
  return { fetcher: fetcher as unknown as Fetcher, up };
}

describe("a dead downstream server", () => {
  let open: DownstreamPool | undefined;
  afterEach(async () => {
    await open?.close();
  });

  it("fails with DownstreamUnavailableError naming it, while the other servers keep working", async () => {
    const base = echoBase("alive");
    open = new DownstreamPool({
      env,
      skill: uniqueSkill("dead"),
      servers: {
        // Far past the test's own 5 s timeout: only a connection refused at once can pass.
        gone: serverConfig({ url: `${fixtures.dead}/mcp`, connect_timeout_ms: 60_000 }),
        alive: serverConfig({ url: `${base}/mcp` }),
      },
    });
    const error = await open.listTools("gone").catch((caught: unknown) => caught);
    expect(error).toMatchObject({ kind: "downstream-unavailable", serverId: "gone" });
    expect((error as Error).message).toContain('"gone"');
    expect((error as { fix: string }).fix).toContain("gone");
    expect(open.states().gone).toMatchObject({ status: "failed", attempts: 1 });

    expect(firstText(await open.callTool("alive", "echo", { text: "still here" }))).toBe("still here");
    expect(open.states().alive).toMatchObject({ status: "ready" });
    await expect(open.callTool("gone", "echo", { text: "x" })).rejects.toMatchObject({ kind: "downstream-unavailable" });
  });

  it("an unknown server id is its own error", async () => {
    open = new DownstreamPool({ env, skill: "known", servers: {} });
    await expect(open.callTool("nope", "echo", {})).rejects.toMatchObject({ kind: "unknown-downstream-server", serverId: "nope" });
  });

  it("drops a connection that dies mid-session and reconnects on a later call", async () => {
    const base = echoBase("flaky");
    const { fetcher, up } = switchableFetcher(base);
    open = new DownstreamPool({
      env: Object.assign({}, env, { FLAKY: fetcher }),
      skill: uniqueSkill("flaky"),
      servers: { flaky: serverConfig({ binding: "FLAKY", url: "https://flaky.internal/mcp" }) },
      backoff: { baseMs: 60_000, maxMs: 60_000, jitter: 0 },
    });
    await open.callTool("flaky", "echo", { text: "1" });
    expect((await readFixtureStats(base)).initialize).toBe(1);

    up.value = false;
    await expect(open.callTool("flaky", "echo", { text: "2" })).rejects.toMatchObject({
      kind: "downstream-unavailable",
      serverId: "flaky",
    });
    expect(open.states().flaky).toMatchObject({ status: "failed", attempts: 1 });

    up.value = true;
    expect(firstText(await open.callTool("flaky", "echo", { text: "3" }))).toBe("3");
    expect(open.states().flaky).toMatchObject({ status: "ready" });
    expect((await readFixtureStats(base)).initialize).toBe(2);
  });

  it("backs off after repeated failures instead of hammering the server, then retries", async () => {
    const base = echoBase("backoff");
    const { fetcher, up } = switchableFetcher(base);
    let clock = 3_000_000_000_000;
    open = new DownstreamPool({
      env: Object.assign({}, env, { FLAKY: fetcher }),
      skill: uniqueSkill("backoff"),
      servers: { flaky: serverConfig({ binding: "FLAKY", url: "https://flaky.internal/mcp" }) },
      backoff: { baseMs: 10_000, maxMs: 60_000, jitter: 0 },
      now: () => clock,
    });
    up.value = false;
    await expect(open.listTools("flaky")).rejects.toMatchObject({ kind: "downstream-unavailable" });
    await expect(open.listTools("flaky")).rejects.toMatchObject({ kind: "downstream-unavailable" });
    expect(open.states().flaky).toMatchObject({ status: "backing-off", until: clock + 10_000, attempts: 2 });

    up.value = true;
    const withheld = await open.listTools("flaky").catch((caught: unknown) => caught);
    expect((withheld as Error).message).toMatch(/next attempt in 10 s/);
    expect((await readFixtureStats(base)).requests).toBe(0);

    clock += 10_000;
    expect(open.states().flaky).toMatchObject({ status: "failed", attempts: 2 });
    expect((await open.listTools("flaky")).map((tool) => tool.name)).toContain("echo");
    expect(open.states().flaky).toMatchObject({ status: "ready" });
  });

  it("concurrent callers share one connect", async () => {
    const base = echoBase("shared");
    // Pins off: with them a fresh pool lists (KV first) before its first call, so the connect would start later.
    open = new DownstreamPool({ env, skill: uniqueSkill("shared"), servers: { echo: serverConfig({ url: `${base}/mcp` }) }, toolPins: false });
    const calls = ["a", "b", "c", "d"].map((text) => open!.callTool("echo", "echo", { text }));
    expect(open.states().echo).toMatchObject({ status: "connecting" });
    expect((await Promise.all(calls)).map(firstText)).toEqual(["a", "b", "c", "d"]);
    const stats = await readFixtureStats(base);
    expect(stats.initialize).toBe(1);
    expect(stats.calls.echo).toBe(4);
  });
});
