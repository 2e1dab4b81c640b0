import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readFixtureStats, resetFixtureStats } from "../fixtures/fixture-stats-client";
import { type EchoExpertStack, fakeModelExpert, startEchoExpertStack } from "./harness/echo-expert-stack";
import { offeredToolNames, textReply, toolCallsReply, toolResultMessages, type FakeOpenAIServer } from "./harness/fake-openai-server";
import { connectMcpClient, resultText } from "./harness/mcp-clients";
import { sharedWranglerDev } from "./harness/shared-wrangler-dev";

/** What the scripted model writes: a dependent chain of two downstream calls, then an echo, in one script. */
const SCRIPT = `const first = Number(await tools.fx__add({ a: 2, b: 3 }));
const second = Number(await tools.fx__add({ a: first, b: 10 }));
const echoed = await tools.fx__echo({ text: "sum=" + second });
return { echoed };`;

/**
 * A code-mode expert through the real path: a real MCP client → `wrangler dev --local` (its
 * `[[worker_loaders]]` binding) → the fake OpenAI-compatible model, which writes one script →
 * the script in a Dynamic Worker → the bridge → the loopback fixture MCP server, three calls →
 * the script's result back to the model → the answer.
 */
describe("code-mode expert end to end", () => {
  let stack: EchoExpertStack;
  let fake: FakeOpenAIServer;

  beforeAll(async () => {
    stack = await startEchoExpertStack({
      tag: "code-mode",
      onServer: { dev: await sharedWranglerDev(), skill: "code-mode" },
      experts: (model) => [
        fakeModelExpert(model, {
          name: "code_expert",
          description: "Adds and echoes through a script.",
          mode: "code",
          internal_tools: { fx: ["echo", "add"] },
          budget: { max_steps: 3, timeout_ms: 30_000, max_output_tokens: 512, max_tool_calls: 5, max_tool_result_bytes: 4_096 },
        }),
      ],
    });
    fake = stack.fake;
    await resetFixtureStats(stack.fxBase);
  });

  afterAll(() => stack?.stop());

  it("answers from one script's three downstream calls, with two model calls, and traces each", async () => {
    fake.reset((request) => {
      const results = toolResultMessages(request);
      if (results.length > 0) return textReply(`script said: ${results.map((r) => r.content).join(" | ")}`);
      return toolCallsReply({ name: "run_script", arguments: { code: SCRIPT } });
    });
    const client = await connectMcpClient("v2-2026", stack.mcpUrl);
    try {
      const result = await client.callTool("code_expert", { query: "add 2 and 3, then 10" });
      expect(result.isError ?? false).toBe(false);
      expect(resultText(result)).toContain("script said:");
      expect(resultText(result)).toContain("sum=15");
      expect(fake.requests).toHaveLength(2);
      expect(offeredToolNames(fake.requests[0]!)).toEqual(["run_script"]);
      const stats = await readFixtureStats(stack.fxBase);
      expect(stats.calls.add).toBe(2);
      expect(stats.calls.echo).toBe(1);
      // The run's trace lists the script, then each call it made, with its arguments.
      const runId = String(result._meta?.["slipsnisse.dev/run"]);
      const contents = await client.readResource(`slipsnisse://runs/${runId}`);
      const json = contents.find((content) => content.mimeType === "application/json");
      const trace = JSON.parse(json && "text" in json ? String(json.text) : "null") as {
        steps: Array<{ toolCalls: Array<{ name: string; status: string; args?: string }> }>;
      };
      expect(trace.steps[0]?.toolCalls.map((call) => [call.name, call.status])).toEqual([
        ["run_script", "ok"],
        ["fx__add", "ok"],
        ["fx__add", "ok"],
        ["fx__echo", "ok"],
      ]);
      expect(trace.steps[0]?.toolCalls[0]?.args).toContain("tools.fx__add");
      expect(trace.steps[0]?.toolCalls[2]?.args).toContain('"b":10');
    } finally {
      await client.close();
    }
  });
});
