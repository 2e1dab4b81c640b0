import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startFixtureServers, type RunningFixtureServers } from "../../fixtures/fixture-servers";
import { readFixtureStats, taggedBase } from "../../fixtures/fixture-stats-client";
import { startFakeOpenAI, textReply, toolCallsReply, toolResultMessages, type FakeOpenAIServer } from "../harness/fake-openai-server";
import { connectMcpClient, resultText, type Progress } from "../harness/mcp-clients";
import { pushSharedSkill, sharedWranglerDev } from "../harness/shared-wrangler-dev";
import type { WranglerDev } from "../harness/wrangler-dev";
import { adminRuns } from "../load/admin-runs-client";
import { connectAbortable, type AbortableKind, type Era } from "./abortable-client";
import { waitFor } from "../../support/wait-for";
import { runIds, waitForNewRun, type StoredRunRow } from "./run-records";

const MAX_STEPS = 5;
const SLEEP_MS = 20_000;
/** The unauthenticated loopback dev user (AUTH=none) whose session the calls run in. */
const DEV_USER_ID = "local:dev";
/** This file's skill on the shared wrangler dev. */
const SKILL = "progress-and-cancellation";

/**
 * Long runs through `wrangler dev`: progress per step reaches a client that sent a progress
 * token, and a client that goes away mid-run cancels the downstream call and leaves a
 * "cancelled" run record behind. The fixture's `sleep` counts cancellations it observed.
 */
describe("progress and cancellation end to end", () => {
  let dev: WranglerDev;
  let fake: FakeOpenAIServer;
  let fixtures: RunningFixtureServers;
  let fxBase = "";

  const loadFor = async (label: string) => {
    fxBase = taggedBase(fixtures.urls.echo, label);
    await pushSharedSkill(dev, SKILL, {
      servers: { fx: { url: `${fxBase}/mcp`, transport: "streamable-http", call_timeout_ms: 60_000 } },
      experts: [
        {
          name: "worker_bee",
          description: "Echoes, then sleeps when asked to.",
          internal_tools: { fx: ["echo", "sleep"] },
          provider: "openai-compatible",
          base_url: fake.baseURL,
          model: "fake-cheap",
          budget: { max_steps: MAX_STEPS, timeout_ms: 45_000, max_output_tokens: 2_048, max_tool_calls: 8, max_tool_result_bytes: 4_096 },
        },
      ],
    });
  };

  beforeAll(async () => {
    [fixtures, fake] = await Promise.all([startFixtureServers(), startFakeOpenAI()]);
    dev = await sharedWranglerDev();
  });
  afterAll(async () => {
    await dev?.stop();
    await Promise.allSettled([fake?.close(), fixtures?.stop()]);
  });

  // Two echo steps then an answer, unless the user asks for a sleep.
  beforeEach(() => {
    fake.reset((request) => {
      const user = String(request.messages.filter((m) => m.role === "user").at(-1)?.content);
      const results = toolResultMessages(request);
      const sleep = /sleep (\d+)/.exec(user);
      if (sleep && results.length === 0) return toolCallsReply({ name: "fx__sleep", arguments: { ms: Number(sleep[1]) } });
      if (sleep) return textReply(`woke up: ${results[0]?.content ?? ""}`);
      if (results.length < 2) return toolCallsReply({ name: "fx__echo", arguments: { text: `round ${results.length + 1}` } });
      return textReply(`done after ${results.length} echoes`);
    });
  });

  for (const kind of ["v2-2025", "v2-2026", "v1-http"] as const) {
    it(`sends one progress notification per step with step, budget and message (${kind})`, async () => {
      await loadFor(`progress-${kind}`);
      const client = await connectMcpClient(kind, `${dev.baseUrl}/s/${SKILL}/mcp`);
      const seen: Progress[] = [];
      try {
        const result = await client.callTool("worker_bee", { query: "echo twice" }, (p) => seen.push(p));
        expect(resultText(result)).toContain("done after 2 echoes");
      } finally {
        await client.close();
      }
      expect(seen).toEqual([
        { progress: 1, total: MAX_STEPS, message: "calling fx__echo" },
        { progress: 2, total: MAX_STEPS, message: "calling fx__echo" },
        { progress: 3, total: MAX_STEPS, message: "writing the answer" },
      ]);
    });
  }

  it("sends no progress to a client that sent no progress token, and still answers", async () => {
    await loadFor("no-token");
    const client = await connectMcpClient("v2-2025", `${dev.baseUrl}/s/${SKILL}/mcp`);
    try {
      const result = await client.callTool("worker_bee", { query: "echo twice" });
      expect(resultText(result)).toContain("done after 2 echoes");
    } finally {
      await client.close();
    }
  });

  /** Starts a sleeping run, waits until the downstream sleep is in flight, then disconnects the client. */
  async function abandonMidSleep(era: Era): Promise<{ run: StoredRunRow; cancelledAfterMs: number }> {
    await loadFor(`cancel-${era}-disconnect`);
    const before = await runIds(dev.persistDir, SKILL);
    const client = await connectAbortable(`${dev.baseUrl}/s/${SKILL}/mcp`, era);
    const call = client.startCall("worker_bee", { query: `please sleep ${SLEEP_MS}` }, () => undefined);
    await waitFor("the downstream sleep to start", async () => ((await readFixtureStats(fxBase)).calls.sleep === 1 ? true : undefined), 15_000);
    const leftAt = Date.now();
    await client.disconnect();
    await expect(call).rejects.toThrow();

    await waitFor("the downstream sleep to be cancelled", async () => ((await readFixtureStats(fxBase)).sleepsCancelled === 1 ? true : undefined), 12_000);
    const cancelledAfterMs = Date.now() - leftAt;
    const run = await waitForNewRun(dev.persistDir, before, undefined, SKILL);
    expect((await readFixtureStats(fxBase)).sleepsCompleted).toBe(0);
    return { run, cancelledAfterMs };
  }

  for (const era of ["2026", "2025"] as const) {
    it(`a client that disconnects mid-run cancels the downstream call and the run is recorded as cancelled (${era})`, async () => {
      const { run, cancelledAfterMs } = await abandonMidSleep(era);
      expect(run.outcome).toBe("cancelled");
      expect(run.ended_at).not.toBeNull();
      // Noticed at the next keep-alive or progress write (about 1 s), far before the 20 s sleep ends.
      // The fixture's counters show that it was cancelled; only the clock shows how soon.
      expect(cancelledAfterMs).toBeLessThan(8_000);
    });
  }

  /**
   * Stop stops, whatever the client: the 2026-07-28 client closes the call's stream; 2025 clients
   * over Streamable HTTP POST `notifications/cancelled` in a new request, which reaches a fresh
   * stateless server and is routed to the caller's ExpertSession by request id; legacy SSE
   * clients POST it to their session, whose long-lived server aborts the handler. Each abort
   * starts only once the fixture reports the downstream sleep running, and the clock runs from
   * the abort to the moment both the fixture saw its call cancelled and the admin runs API says
   * "cancelled".
   */
  for (const kind of ["v1-http", "v2-2025", "v2-2026", "v1-sse", "v2-sse"] as const satisfies readonly AbortableKind[]) {
    it(`an aborted call cancels the downstream call and the run within 1 s (${kind})`, async () => {
      await loadFor(`abort-${kind}`);
      const admin = { baseUrl: dev.baseUrl };
      const before = new Set((await adminRuns(admin, SKILL, DEV_USER_ID)).map((run) => run.id));
      const client = await connectAbortable(`${dev.baseUrl}/s/${SKILL}/${kind.endsWith("-sse") ? "sse" : "mcp"}`, kind);
      try {
        const call = client.startCall("worker_bee", { query: `please sleep ${SLEEP_MS}` });
        await waitFor("the downstream sleep to start", async () => ((await readFixtureStats(fxBase)).calls.sleep === 1 ? true : undefined), 15_000, 20);
        const abortedAt = performance.now();
        client.abortCall();
        const { stats, run } = await waitFor(
          "the downstream sleep to be cancelled and the run recorded as cancelled",
          async () => {
            const [stats, runs] = await Promise.all([readFixtureStats(fxBase), adminRuns(admin, SKILL, DEV_USER_ID)]);
            const run = runs.find((candidate) => !before.has(candidate.id));
            return stats.sleepsCancelled === 1 && run?.outcome === "cancelled" ? { stats, run } : undefined;
          },
          10_000,
          20,
        );
        const elapsedMs = performance.now() - abortedAt;
        await expect(call).rejects.toThrow();
        console.log(`${kind}: abort to cancelled downstream call and run record in ${Math.round(elapsedMs)} ms`);
        expect(stats.sleepsCompleted).toBe(0);
        expect(run.error).toBeNull();
        // The latency is the property under test (the waits above observe the state, not its speed).
        expect(elapsedMs).toBeLessThan(1_000);
      } finally {
        await client.disconnect();
      }
    });
  }
});
