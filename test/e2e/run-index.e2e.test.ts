import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { readFixtureStats } from "../fixtures/fixture-stats-client";
import { waitFor } from "../support/wait-for";
import { runCliProcess } from "./cli/cli-process";
import { type EchoExpertStack, fakeModelExpert, startEchoExpertStack } from "./harness/echo-expert-stack";
import { textReply, toolCallsReply, toolResultMessages, type FakeOpenAIServer } from "./harness/fake-openai-server";
import { connectMcpClient, resultText } from "./harness/mcp-clients";
import { sharedWranglerDev } from "./harness/shared-wrangler-dev";
import type { WranglerDev } from "./harness/wrangler-dev";

const traceMetaSchema = z.object({ runId: z.uuid(), traceId: z.string().regex(/^[0-9a-f]{32}$/) });
const summarySchema = z.looseObject({
  id: z.string(),
  skill: z.string(),
  expert: z.string(),
  outcome: z.string(),
  traceId: z.string(),
  toolCalls: z.number(),
  cost: z.number().nullable(),
});
const traceSchema = z.object({
  summary: summarySchema,
  run: z.looseObject({ args: z.string(), answer: z.string(), caller: z.looseObject({ userId: z.string() }) }),
  steps: z.array(
    z.looseObject({
      model: z.looseObject({ provider: z.string(), model: z.string() }).optional(),
      toolCalls: z.array(
        z.looseObject({
          server: z.string().optional(),
          tool: z.string().optional(),
          status: z.string(),
          args: z.string().optional(),
          result: z.string().optional(),
        }),
      ),
    }),
  ),
});

/**
 * A run made by a real MCP client through `wrangler dev` lands in the tenant's run index after
 * the answer, and its trace (arguments, the tool call's arguments and result excerpt) opens
 * from the admin API and the CLI; the run's trace id reached the downstream server and the model.
 */
// This file's skill on the shared wrangler dev; runs, usage and server stats are read for it alone.
const SKILL = "run-index";

describe("run index end to end", () => {
  let stack: EchoExpertStack;
  let dev: WranglerDev;
  let fake: FakeOpenAIServer;
  let fxBase: string;
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "slipsnisse-run-index-"));
    stack = await startEchoExpertStack({
      tag: "run-index",
      onServer: { dev: await sharedWranglerDev(), skill: SKILL },
      experts: (model) => [
        fakeModelExpert(model, { name: "echo_expert", description: "Echoes the query through the fixture server.", internal_tools: { fx: ["echo"] } }),
      ],
      skill: { pricing: { "openai-compatible": { "fake-cheap": { input_per_million: 1, output_per_million: 2 } } } },
    });
    ({ dev, fake, fxBase } = stack);
    fake.reset((request) => {
      const results = toolResultMessages(request);
      if (results.length > 0) return textReply(`downstream said: ${results.map((r) => r.content).join(" | ")}`);
      return toolCallsReply({ name: "fx__echo", arguments: { text: "indexed-echo-42" } });
    });
  });

  afterAll(() => stack?.stop());

  const getJson = async (path: string): Promise<unknown> => {
    const response = await fetch(`${dev.baseUrl}/admin/api${path}`, { signal: AbortSignal.timeout(10_000) });
    expect(response.status, path).toBe(200);
    return response.json();
  };

  it("indexes a run with a tool call and opens its trace, in the API and the CLI", async () => {
    const client = await connectMcpClient("v2-2025", stack.mcpUrl);
    let meta: z.infer<typeof traceMetaSchema>;
    let answeredAt: number;
    try {
      const result = await client.callTool("echo_expert", { query: "what does the echo say?" });
      answeredAt = performance.now();
      expect(resultText(result)).toContain("downstream said: indexed-echo-42");
      meta = traceMetaSchema.parse(result._meta?.["slipsnisse.dev/trace"]);
    } finally {
      await client.close();
    }

    // The row is written after the answer: wait until it is observed, bounded.
    const listed = await waitFor("the run in the index", async () => {
      const page = z.object({ runs: z.array(summarySchema) }).parse(await getJson(`/runs?skill=${SKILL}&expert=echo_expert`));
      return page.runs.find((run) => run.id === meta.runId);
    });
    console.log(`run index row visible ${Math.round(performance.now() - answeredAt)} ms after the answer`);
    expect(listed).toMatchObject({ outcome: "ok", traceId: meta.traceId, toolCalls: 1 });
    expect(listed.cost).toBeGreaterThan(0);

    const trace = traceSchema.parse(await getJson(`/runs/${meta.runId}`));
    expect(trace.run.args).toBe(JSON.stringify({ query: "what does the echo say?" }));
    expect(trace.run.answer).toContain("downstream said: indexed-echo-42");
    const call = trace.steps[0]?.toolCalls[0];
    expect(call).toMatchObject({ server: "fx", tool: "echo", status: "ok", args: JSON.stringify({ text: "indexed-echo-42" }), result: "indexed-echo-42" });
    expect(trace.steps[0]?.model).toMatchObject({ provider: "openai-compatible.chat", model: "fake-cheap" });

    // The trace id went to the downstream server and to the model on every request.
    const traceparent = new RegExp(`^00-${meta.traceId}-[0-9a-f]{16}-01$`);
    const stats = await readFixtureStats(fxBase);
    expect(stats.callTraceparents).toHaveLength(1);
    expect(stats.callTraceparents[0]).toMatch(traceparent);
    expect(fake.calls).toHaveLength(2);
    for (const recorded of fake.calls) expect(recorded.traceparent).toMatch(traceparent);

    const cli = (...args: string[]) => runCliProcess(args, { cwd: dir, env: { SLIPSNISSE_URL: dev.baseUrl } });
    const list = await cli("runs", "--skill", SKILL);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toContain(meta.runId);
    const one = await cli("runs", meta.runId);
    expect(one.code).toBe(0);
    expect(one.stdout).toContain(`trace ${meta.traceId}`);
    expect(one.stdout).toContain('fx__echo {"text":"indexed-echo-42"}');
    expect(one.stdout).toContain("→ indexed-echo-42");
    const usage = await cli("usage", "--group-by", "expert", "--skill", SKILL);
    expect(usage.code).toBe(0);
    expect(usage.stdout).toMatch(
      /echo_expert\n {2}1 runs \(ok 1\); tokens \d+ in \/ \d+ out; 1 tool calls; \d+ bytes; p50 \d+ ms, p95 \d+ ms; cost [\d.e-]+\n/,
    );
    const servers = await cli("usage", "--servers", "--skill", SKILL);
    expect(servers.code).toBe(0);
    expect(servers.stdout).toContain(`${SKILL}/fx\n  last hour 1 calls, 0 errors`);
  });
});
