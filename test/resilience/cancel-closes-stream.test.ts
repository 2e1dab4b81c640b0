import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { describe, expect, it } from "vitest";
import { inject } from "vitest";
import { CancelClosesStreamTransport } from "../../src/downstream/cancel-closes-stream-transport";
import { readFixtureStats, taggedBase } from "../fixtures/fixture-stats-client";
import type { FixtureStats } from "../fixtures/fixture-stats-schema";
import { waitFor } from "../support/wait-for";

const fixtures = inject("fixtureServers");

async function connect(base: string, wrap: boolean): Promise<Client> {
  const inner = new StreamableHTTPClientTransport(new URL(`${base}/mcp`));
  const client = new Client({ name: "cancel-test", version: "0.0.0" }, { versionNegotiation: { mode: "auto" } });
  await client.connect(wrap ? new CancelClosesStreamTransport(inner) : inner);
  return client;
}

function waitForStats(base: string, done: (stats: FixtureStats) => boolean, what: string): Promise<FixtureStats> {
  return waitFor(what, async () => {
    const stats = await readFixtureStats(base);
    return done(stats) ? stats : undefined;
  });
}

/** Aborts only once the server has the call, so the abort always lands mid-call. */
async function abortOnceReceived(base: string, controller: AbortController): Promise<void> {
  await waitForStats(base, (stats) => stats.calls.sleep === 1, "the server to receive the sleep call");
  controller.abort();
}

/** A stateless 2025 downstream server (the echo fixture, a fresh SDK v1 server per request). */
describe("cancelling a call on a stateless 2025 downstream server", () => {
  it("the SDK's notifications/cancelled alone reaches a fresh server instance and the call runs on", async () => {
    const base = taggedBase(fixtures.echo, "cancel-plain");
    const client = await connect(base, false);
    const controller = new AbortController();
    const call = client.callTool({ name: "sleep", arguments: { ms: 1_500 } }, { signal: controller.signal });
    await abortOnceReceived(base, controller);
    await expect(call).rejects.toThrow();
    // The server never learns of the cancel: the sleep completes.
    const stats = await waitForStats(base, (s) => s.sleepsCompleted + s.sleepsCancelled > 0, "the sleep to end");
    expect(stats).toMatchObject({ sleepsCompleted: 1, sleepsCancelled: 0 });
    await client.close();
  });

  it("with CancelClosesStreamTransport the call's stream closes and the server cancels the tool", async () => {
    const base = taggedBase(fixtures.echo, "cancel-wrapped");
    const client = await connect(base, true);
    const controller = new AbortController();
    const call = client.callTool({ name: "sleep", arguments: { ms: 10_000 } }, { signal: controller.signal });
    await abortOnceReceived(base, controller);
    await expect(call).rejects.toThrow();
    const stats = await waitForStats(base, (s) => s.sleepsCancelled > 0, "the server to cancel the sleep");
    expect(stats).toMatchObject({ sleepsCompleted: 0, sleepsCancelled: 1 });
    // The transport stays usable after the cancel.
    const echoed = await client.callTool({ name: "echo", arguments: { text: "still here" } });
    expect(JSON.stringify(echoed.content)).toContain("still here");
    await client.close();
  });
});
