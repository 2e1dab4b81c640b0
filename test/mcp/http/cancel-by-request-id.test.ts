import { env } from "cloudflare:test";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { describe, expect, inject, it } from "vitest";
import { z } from "zod";
import type { UserProps } from "../../../src/auth/user-props";
import { serveMcp } from "../../../src/mcp/http/mcp-endpoint";
import { sessionStub } from "../../../src/experts/session/session-name";
import { readFixtureStats, taggedBase } from "../../fixtures/fixture-stats-client";
import { waitFor } from "../../support/wait-for";
import { type ScriptedTurn, useCatalogWithScriptedModels, usage } from "../../support/workers/scripted-model";
import { callOf, expertOf } from "../../support/workers/session-helpers";

const skill = "cancel-tests";
const fixtures = inject("fixtureServers");
const alice: UserProps = { userId: "u-alice-cancel", login: "alice", role: "member" };
const bob: UserProps = { userId: "u-bob-cancel", login: "bob", role: "member" };

/** One fixture tag for the file; tests compare counters with what they read before they started. */
const fxBase = taggedBase(fixtures.echo, "cancel");
type Stats = Awaited<ReturnType<typeof readFixtureStats>>;

/** The model asks the fixture to sleep `ms`, then answers once it sees the tool's result. */
function sleepThenAnswer(ms: number): ScriptedTurn {
  return (options) => {
    const sawResult = options.prompt.some((message) => message.role === "tool");
    return {
      content: sawResult
        ? [{ type: "text", text: "woke up" }]
        : [{ type: "tool-call", toolCallId: `sleep-${crypto.randomUUID()}`, toolName: "fx__sleep", input: JSON.stringify({ ms }) }],
      finishReason: sawResult ? { unified: "stop", raw: "stop" } : { unified: "tool-calls", raw: "tool_calls" },
      usage: usage(10, 5),
      warnings: [],
    };
  };
}

function waitForStats(done: (stats: Stats) => boolean, what: string): Promise<Stats> {
  return waitFor(
    what,
    async () => {
      const stats = await readFixtureStats(fxBase);
      return done(stats) ? stats : undefined;
    },
    10_000,
    25,
  );
}

const toolCallSchema = z.object({ method: z.literal("tools/call"), id: z.union([z.string(), z.number()]) });

/**
 * A fetch that hands each request to serveMcp as `user` (what the auth layer does after it
 * validated the user's token) and notes the JSON-RPC id of each tools/call it carries.
 */
function fetchAs(user: UserProps, toolCallIds: Array<string | number>): typeof fetch {
  return async (input, init) => {
    const request = new Request(input, init);
    const headers = new Headers(request.headers);
    headers.set("host", new URL(request.url).host);
    if (typeof init?.body === "string") {
      const call = toolCallSchema.safeParse(JSON.parse(init.body));
      if (call.success) toolCallIds.push(call.data.id);
    }
    return serveMcp(new Request(request, { headers }), env, user);
  };
}

async function connectAs(user: UserProps, toolCallIds: Array<string | number> = []): Promise<Client> {
  const client = new Client({ name: `cancel-test-${user.login}`, version: "0.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(`http://localhost/s/${skill}/mcp`), { fetch: fetchAs(user, toolCallIds) }));
  return client;
}

const sleeps = (stats: Stats) => stats.calls.sleep ?? 0;

describe("notifications/cancelled is routed to the caller's own session by request id", () => {
  const models = useCatalogWithScriptedModels({
    skills: {
      [skill]: {
        servers: { fx: { url: `${fxBase}/mcp`, transport: "streamable-http", call_timeout_ms: 30_000 } },
        experts: [expertOf("sleeper", { fx: ["sleep"] }, { timeout_ms: 30_000 })],
      },
    },
  });

  it("another user's cancel naming the caller's request id aborts nothing: the run completes ok", async () => {
    models.play([sleepThenAnswer(1_500)]);
    const aliceIds: Array<string | number> = [];
    const [aliceClient, bobClient] = await Promise.all([connectAs(alice, aliceIds), connectAs(bob)]);
    try {
      const before = await readFixtureStats(fxBase);
      const call = aliceClient.callTool({ name: "sleeper", arguments: { query: "sleep" } });
      await waitForStats((stats) => sleeps(stats) === sleeps(before) + 1, "alice's downstream sleep to start");
      const [requestId] = aliceIds;
      expect(requestId).toBeDefined();
      // serveMcp forwards the cancel before it answers 202, so once this resolves Bob's session was asked.
      await bobClient.notification({ method: "notifications/cancelled", params: { requestId: requestId ?? -1, reason: "not yours" } });
      // Still in flight when the cancel was handled (otherwise this test would prove nothing).
      expect(await readFixtureStats(fxBase)).toMatchObject({ sleepsCompleted: before.sleepsCompleted, sleepsCancelled: before.sleepsCancelled });

      const result = await call;
      expect(result.isError).toBeFalsy();
      expect(JSON.stringify(result.content)).toContain("woke up");
      expect(await readFixtureStats(fxBase)).toMatchObject({ sleepsCompleted: before.sleepsCompleted + 1, sleepsCancelled: before.sleepsCancelled });
      const [run] = await sessionStub(env, skill, alice.userId).recentRuns(1);
      expect(run?.outcome).toBe("ok");
    } finally {
      await Promise.all([aliceClient.close(), bobClient.close()]);
    }
  });

  it("the caller's own cancel, sent on a new request, aborts the downstream call and records the run as cancelled", async () => {
    models.play([sleepThenAnswer(20_000)]);
    const client = await connectAs(alice);
    const controller = new AbortController();
    try {
      const before = await readFixtureStats(fxBase);
      const call = client.callTool({ name: "sleeper", arguments: { query: "sleep" } }, { signal: controller.signal });
      await waitForStats((stats) => sleeps(stats) === sleeps(before) + 1, "the downstream sleep to start");
      controller.abort();
      await expect(call).rejects.toThrow();
      await waitForStats((stats) => stats.sleepsCancelled === before.sleepsCancelled + 1, "the downstream sleep to be cancelled");
      await waitFor(
        "alice's run to be recorded as cancelled",
        async () => ((await sessionStub(env, skill, alice.userId).recentRuns(1))[0]?.outcome === "cancelled" ? true : undefined),
        10_000,
        25,
      );
    } finally {
      await client.close();
    }
  });

  const session = () => sessionStub(env, skill, alice.userId);

  it("ExpertSession.cancelRequest matches the request id with its JSON type and the client session id, and aborts only that run", async () => {
    models.play([sleepThenAnswer(20_000)]);
    const before = await readFixtureStats(fxBase);
    const request = callOf(skill, "sleeper", "sleep", { mcpRequest: { requestId: 7, clientSessionId: "client-session-a" } }, alice);
    const run = session().callExpert(request);
    await waitForStats((stats) => sleeps(stats) === sleeps(before) + 1, "the downstream sleep to start");

    expect(await session().cancelRequest({ requestId: "7", clientSessionId: "client-session-a" })).toBe("not_found");
    expect(await session().cancelRequest({ requestId: 7 })).toBe("not_found");
    expect(await session().cancelRequest({ requestId: 7, clientSessionId: "client-session-b" })).toBe("not_found");
    expect(await sessionStub(env, skill, bob.userId).cancelRequest({ requestId: 7, clientSessionId: "client-session-a" })).toBe("not_found");
    expect(await session().cancelRequest({ requestId: 7, clientSessionId: "client-session-a" })).toBe("cancelled");
    expect((await run).outcome).toBe("cancelled");
    // Finished runs leave the index: a late duplicate cancel finds nothing.
    expect(await session().cancelRequest({ requestId: 7, clientSessionId: "client-session-a" })).toBe("not_found");
  });

  it("ExpertSession.cancelRequest refuses an ambiguous cancel (two runs under one request key) and both runs complete", async () => {
    models.play([sleepThenAnswer(1_500)]);
    const before = await readFixtureStats(fxBase);
    const runs = [1, 2].map(() => session().callExpert(callOf(skill, "sleeper", "sleep", { mcpRequest: { requestId: 5 } }, alice)));
    await waitForStats((stats) => sleeps(stats) === sleeps(before) + 2, "both downstream sleeps to start");
    expect(await session().cancelRequest({ requestId: 5 })).toBe("ambiguous");
    const results = await Promise.all(runs);
    expect(results.map((result) => result.outcome)).toEqual(["ok", "ok"]);
  });
});
