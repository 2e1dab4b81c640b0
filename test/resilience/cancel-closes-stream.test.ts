import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { describe, expect, it } from "vitest";
import { inject } from "vitest";
import { CancelClosesStreamTransport } from "../../src/downstream/cancel-closes-stream-transport";
import { readFixtureStats, taggedBase } from "../fixtures/fixture-stats-client";

const fixtures = inject("fixtureServers");

async function connect(base: string, wrap: boolean): Promise<Client> {
  const inner = new StreamableHTTPClientTransport(new URL(`${base}/mcp`));
  const client = new Client({ name: "cancel-test", version: "0.0.0" }, { versionNegotiation: { mode: "auto" } });
  await client.connect(wrap ? new CancelClosesStreamTransport(inner) : inner);
  return client;
}

async function waitForStats(base: string, done: (s: Awaited<ReturnType<typeof readFixtureStats>>) => boolean, ms: number) {
  const deadline = Date.now() + ms;
  let stats = await readFixtureStats(base);
  while (!done(stats) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    stats = await readFixtureStats(base);
  }
  return stats;
}

/** A stateless 2025 downstream server (the echo fixture, a fresh SDK v1 server per request). */
describe("cancelling a call on a stateless 2025 downstream server", () => {
  it("the SDK's notifications/cancelled alone reaches a fresh server instance and the call runs on", async () => {
    const base = taggedBase(fixtures.echo, "cancel-plain");
    const client = await connect(base, false);
    const controller = new AbortController();
    const call = client.callTool({ name: "sleep", arguments: { ms: 1_500 } }, { signal: controller.signal });
    setTimeout(() => controller.abort(), 200);
    await expect(call).rejects.toThrow();
    // The server never learns of the cancel: the sleep completes.
    const stats = await waitForStats(base, (s) => s.sleepsCompleted + s.sleepsCancelled > 0, 4_000);
    expect(stats).toMatchObject({ sleepsCompleted: 1, sleepsCancelled: 0 });
    await client.close();
  });

  it("with CancelClosesStreamTransport the call's stream closes and the server cancels the tool", async () => {
    const base = taggedBase(fixtures.echo, "cancel-wrapped");
    const client = await connect(base, true);
    const controller = new AbortController();
    const call = client.callTool({ name: "sleep", arguments: { ms: 10_000 } }, { signal: controller.signal });
    setTimeout(() => controller.abort(), 200);
    await expect(call).rejects.toThrow();
    const stats = await waitForStats(base, (s) => s.sleepsCancelled > 0, 4_000);
    expect(stats).toMatchObject({ sleepsCompleted: 0, sleepsCancelled: 1 });
    // The transport stays usable after the cancel.
    const echoed = await client.callTool({ name: "echo", arguments: { text: "still here" } });
    expect(JSON.stringify(echoed.content)).toContain("still here");
    await client.close();
  });
});
