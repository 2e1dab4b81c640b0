import { env, runInDurableObject } from "cloudflare:test";
import { APICallError } from "ai";
import { describe, expect, inject, it } from "vitest";
import type { UserProps } from "../../../src/auth/user-props";
import type { ExpertCallRequest } from "../../../src/experts/core/call-types";
import { toToolResult, META_TRACE } from "../../../src/mcp/delivery/expert-tool-result";
import { sessionStub } from "../../../src/experts/session/session-name";
import { readFixtureStats, taggedBase } from "../../fixtures/fixture-stats-client";
import { expertOf } from "../../support/workers/session-helpers";
import { waitFor } from "../../support/wait-for";
import { flushRunIndex } from "../../support/workers/run-index-flush";
import { useCatalogWithScriptedModels, usage } from "../../support/workers/scripted-model";

const SECRET = "tok-fixture-5ecr3t-77"; // FIXTURE_TOKEN in vitest.config.ts: a downstream header secret
const MODEL_KEY = "mdlkey-fixture-9d2f41"; // FIXTURE_MODEL_KEY: the expert's provider API key
const fixtures = inject("fixtureServers");
const echo = taggedBase(fixtures.echo, "trace");
const skill = "trace-tests";
const dana: UserProps = { userId: "u-dana", login: "dana", email: "dana@example.com", role: "member" };

const session = () => sessionStub(env, skill, dana.userId);
const call = (expert: string, query: string): ExpertCallRequest => ({ runId: crypto.randomUUID(), skill, expert, args: { query }, user: dana });

/** Every stored row of the session and of the tenant's run index, as text. */
async function everythingStored(): Promise<string> {
  const sessionRows = await runInDurableObject(session(), (_instance, state) =>
    ["runs", "run_steps", "threads", "thread_turns"].flatMap((table) =>
      state.storage.sql
        .exec(`SELECT * FROM ${table}`)
        .toArray()
        .map((row) => JSON.stringify(row)),
    ),
  );
  const index = await env.DB.prepare("SELECT * FROM run_index").all();
  const calls = await env.DB.prepare("SELECT * FROM run_tool_calls").all();
  return [...sessionRows, JSON.stringify(index.results), JSON.stringify(calls.results)].join("\n");
}

describe("a run is a full trace", () => {
  const models = useCatalogWithScriptedModels({
    skills: {
      [skill]: {
        servers: { echo: { url: `${echo}/mcp`, transport: "streamable-http", headers: { Authorization: "Bearer ${FIXTURE_TOKEN}" } } },
        experts: [{ ...expertOf("echoer", { echo: ["echo", "whoami", "sleep", "not_listed"] }), api_key_secret: "FIXTURE_MODEL_KEY", model: "llama3.1" }],
        pricing: { "openai-compatible": { "llama3.1": { input_per_million: 0.5, output_per_million: 1.5 } } },
      },
    },
  });

  it("stores caller, arguments, model calls, tool calls, notes and answer, with no secret in any stored field", async () => {
    const model = models.play([
      {
        calls: [
          { name: "echo__echo", input: { text: `echo ${SECRET} and ${MODEL_KEY}` } },
          { name: "echo__whoami", input: {} },
        ],
      },
      { text: `Done: the key was ${MODEL_KEY}, the token ${SECRET}.` },
    ]);
    const request = call("echoer", `please use ${SECRET} or ${MODEL_KEY}`);
    const result = await session().callExpert(request);
    expect(result.outcome).toBe("ok");
    await flushRunIndex(session());

    // The trace id travels in _meta with the run id, and on every request the run made.
    const traceId = result.traceId ?? "";
    expect(traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(toToolResult(result)._meta?.[META_TRACE]).toEqual({ runId: request.runId, traceId });
    const traceparent = new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`);
    const stats = await readFixtureStats(echo);
    expect(stats.callTraceparents).toHaveLength(2);
    for (const header of stats.callTraceparents) expect(header).toMatch(traceparent);
    expect(model.doGenerateCalls).toHaveLength(2);
    for (const generate of model.doGenerateCalls) expect(generate.headers?.traceparent).toMatch(traceparent);
    // The secret really went downstream (the only place it may go).
    expect(stats.authorizations).toContain(`Bearer ${SECRET}`);

    const run = await session().run(request.runId);
    expect(run).toMatchObject({
      traceId,
      caller: { userId: "u-dana", login: "dana", email: "dana@example.com" },
      outcome: "ok",
      catalogVersion: expect.any(Number),
    });
    expect(run?.args).toBe(JSON.stringify({ query: "please use [redacted] or [redacted]" }));
    expect(run?.notes).toEqual(['echo__not_listed is whitelisted but "echo" does not list it']);
    expect(run?.answer).toBe("Done: the key was [redacted], the token [redacted].");

    const steps = await session().steps(request.runId);
    expect(steps[0]?.model).toMatchObject({ provider: "mock-provider", model: "mock-model", retries: 0, latencyMs: expect.any(Number) });
    expect(steps[0]).toMatchObject({ finishReason: "tool-calls", inputTokens: 10, outputTokens: 5 });
    const [echoCall, whoamiCall] = steps[0]?.toolCalls ?? [];
    expect(echoCall).toMatchObject({
      server: "echo",
      tool: "echo",
      status: "ok",
      args: JSON.stringify({ text: "echo [redacted] and [redacted]" }),
      result: "echo [redacted] and [redacted]",
    });
    expect(echoCall?.bytes).toBeGreaterThan(0);
    expect(whoamiCall).toMatchObject({ server: "echo", tool: "whoami", status: "ok", result: "you sent: Bearer [redacted]" });

    const index = await env.DB.prepare("SELECT * FROM run_index WHERE run_id = ?").bind(request.runId).first();
    expect(index).toMatchObject({
      skill,
      expert: "echoer",
      user_id: "u-dana",
      user_login: "dana",
      trace_id: traceId,
      outcome: "ok",
      tool_calls: 2,
      steps: 2,
      input_tokens: 20,
      output_tokens: 10,
    });
    // 20 tokens in at 0.5 and 10 out at 1.5 per million, at the skill's catalog prices.
    expect(index?.cost).toBeCloseTo((20 * 0.5 + 10 * 1.5) / 1_000_000, 12);
    const indexedCalls = await env.DB.prepare("SELECT server_id, tool, status FROM run_tool_calls WHERE run_id = ? ORDER BY seq").bind(request.runId).all();
    expect(indexedCalls.results).toEqual([
      { server_id: "echo", tool: "echo", status: "ok" },
      { server_id: "echo", tool: "whoami", status: "ok" },
    ]);

    const stored = await everythingStored();
    expect(stored).not.toContain(SECRET);
    expect(stored).not.toContain(MODEL_KEY);
  });

  it("redacts a secret a failing provider echoed from the stored error", async () => {
    models.play([
      () => {
        throw new APICallError({
          message: `invalid key ${MODEL_KEY}`,
          url: "https://api.example.test/v1",
          requestBodyValues: {},
          statusCode: 400,
          isRetryable: false,
        });
      },
    ]);
    const request = call("echoer", "fail please");
    const result = await session().callExpert(request);
    expect(result.outcome).toBe("error");
    // Nor does the orchestrator read it in the error text.
    expect(result.text).not.toContain(MODEL_KEY);
    const run = await session().run(request.runId);
    expect(run?.error).toEqual(expect.any(String));
    expect(JSON.stringify(run)).not.toContain(MODEL_KEY);
  });

  it("counts the model's retried attempts on the step they belong to", async () => {
    let attempts = 0;
    models.play([
      () => {
        attempts++;
        if (attempts === 1) {
          throw new APICallError({ message: "HTTP 503", url: "https://api.example.test/v1", requestBodyValues: {}, statusCode: 503, isRetryable: true });
        }
        return { content: [{ type: "text", text: "after a retry" }], finishReason: { unified: "stop", raw: "stop" }, usage: usage(3, 4), warnings: [] };
      },
    ]);
    const request = call("echoer", "retry please");
    expect((await session().callExpert(request)).outcome).toBe("ok");
    const steps = await session().steps(request.runId);
    expect(steps.map((step) => step.model?.retries)).toEqual([1]);
  });

  it("keeps a call the cancel cut off as an interrupted last step, in the session and the index", async () => {
    models.play([{ calls: [{ name: "echo__sleep", input: { ms: 20_000 } }] }, { text: "never" }]);
    const request = call("echoer", "sleep then cancel");
    const running = session().callExpert(request);
    await waitFor("the fixture to receive the sleep call", async () => ((await readFixtureStats(echo)).calls.sleep === 1 ? true : undefined));
    expect(await session().cancel(request.runId)).toBe(true);
    expect((await running).outcome).toBe("cancelled");
    await flushRunIndex(session());
    const steps = await session().steps(request.runId);
    expect(steps.at(-1)).toMatchObject({
      finishReason: "interrupted",
      toolCalls: [{ server: "echo", tool: "sleep", status: "cancelled", args: JSON.stringify({ ms: 20_000 }) }],
    });
    const indexed = await env.DB.prepare("SELECT tool, status FROM run_tool_calls WHERE run_id = ?").bind(request.runId).all();
    expect(indexed.results).toEqual([{ tool: "sleep", status: "cancelled" }]);
  });
});
