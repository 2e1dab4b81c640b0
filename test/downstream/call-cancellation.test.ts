import { afterEach, describe, expect, it } from "vitest";
import type { DownstreamPool } from "../../src/downstream/downstream-pool";
import { readFixtureStats } from "../fixtures/fixture-stats-client";
import { waitFor } from "../support/wait-for";
import { echoBase, firstText, pool, serverConfig, sseBase } from "./downstream-test-helpers";

describe("cancelling and timing out downstream calls", () => {
  let open: DownstreamPool | undefined;
  afterEach(async () => {
    await open?.close();
  });

  for (const transport of ["streamable-http", "sse"] as const) {
    it(`an abort signal cancels a slow call quickly (${transport})`, async () => {
      const base = transport === "sse" ? sseBase("abort") : echoBase("abort");
      open = pool({ slow: serverConfig({ url: `${base}/${transport === "sse" ? "sse" : "mcp"}`, transport }) });
      await open.listTools("slow");
      const controller = new AbortController();
      // A 10 s sleep, aborted once the server has it: only the abort can end it within the test.
      const call = open.callTool("slow", "sleep", { ms: 10_000 }, { signal: controller.signal });
      await waitFor("the server to receive the sleep call", async () => ((await readFixtureStats(base)).calls.sleep === 1 ? true : undefined), 4_000);
      controller.abort();
      const error = await call.catch((caught: unknown) => caught);
      expect(error).toMatchObject({ kind: "downstream-call-aborted", serverId: "slow", toolName: "sleep" });
      // The server stays warm: the next call needs no new connection.
      expect(firstText(await open.callTool("slow", "echo", { text: "after" }))).toBe("after");
      expect(open.states().slow?.status).toBe("ready");
    });
  }

  it("an already aborted signal sends nothing", async () => {
    const base = echoBase("pre-aborted");
    open = pool({ echo: serverConfig({ url: `${base}/mcp` }) });
    const controller = new AbortController();
    controller.abort();
    await expect(open.callTool("echo", "echo", { text: "x" }, { signal: controller.signal })).rejects.toMatchObject({
      kind: "downstream-call-aborted",
    });
    expect((await readFixtureStats(base)).requests).toBe(0);
  });

  it("call_timeout_ms ends a slow call with DownstreamTimeoutError and keeps the server", async () => {
    const base = echoBase("timeout");
    open = pool({ slow: serverConfig({ url: `${base}/mcp`, call_timeout_ms: 300 }) });
    const error = await open.callTool("slow", "sleep", { ms: 5_000 }).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ kind: "downstream-timeout", serverId: "slow", toolName: "sleep", timeoutMs: 300 });
    expect((error as Error).message).toContain("300 ms");
    expect(open.states().slow?.status).toBe("ready");
    expect(firstText(await open.callTool("slow", "sleep", { ms: 10 }))).toBe("slept 10");
  });

  it("an unknown tool is answered, not a dead server", async () => {
    open = pool({ echo: serverConfig({ url: `${echoBase("refusal")}/mcp` }) });
    const result = await open.callTool("echo", "no_such_tool", {});
    expect(result.isError).toBe(true);
    expect(open.states().echo?.status).toBe("ready");
  });
});
