import { afterEach, describe, expect, it } from "vitest";
import type { DownstreamPool } from "../../src/downstream/downstream-pool";
import { readFixtureStats } from "../fixtures/fixture-stats-client";
import { echoBase, firstText, pool, serverConfig } from "./downstream-test-helpers";

async function expireSessions(base: string): Promise<void> {
  const response = await fetch(`${base}/sessions/expire`, { method: "POST" });
  await response.body?.cancel();
  expect(response.status).toBe(204);
}

describe("an expired downstream session", () => {
  let open: DownstreamPool | undefined;
  afterEach(async () => {
    await open?.close();
  });

  it("is re-initialised once, transparently, and the call still answers", async () => {
    const base = echoBase("session");
    open = pool({ stateful: serverConfig({ url: `${base}/mcp-stateful`, transport: "streamable-http", tool_list_ttl_ms: 0 }) });
    expect(firstText(await open.callTool("stateful", "echo", { text: "one" }))).toBe("one");
    expect((await readFixtureStats(base)).initialize).toBe(1);

    await expireSessions(base);
    expect(firstText(await open.callTool("stateful", "echo", { text: "two" }))).toBe("two");
    await expireSessions(base);
    expect((await open.listTools("stateful")).map((tool) => tool.name)).toContain("echo");

    const stats = await readFixtureStats(base);
    expect(stats.initialize).toBe(3);
    // The refused request never ran; the retried one ran once.
    expect(stats.calls.echo).toBe(2);
    expect(open.states().stateful).toMatchObject({ status: "ready" });
  });
});
