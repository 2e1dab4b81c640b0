import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { readFixtureStats, resetFixtureStats } from "../fixtures/fixture-stats-client";
import { type EchoExpertStack, fakeModelExpert, startEchoExpertStack } from "./harness/echo-expert-stack";
import { offeredToolNames, textReply, toolCallsReply, toolResultMessages, type FakeOpenAIServer } from "./harness/fake-openai-server";
import { inspectorListToolNames } from "./harness/inspector-cli";
import { connectMcpClient, resultText, type McpClientKind } from "./harness/mcp-clients";
import { sharedWranglerDev } from "./harness/shared-wrangler-dev";

/**
 * The whole path with real parts only: a real MCP client → `wrangler dev` (MCP surface,
 * ExpertSession Durable Object, runner) → the fake OpenAI-compatible model on loopback, which
 * asks for `fx__echo` → the loopback fixture MCP server → back to the model → the answer.
 */
describe("expert call end to end", () => {
  let stack: EchoExpertStack;
  let fake: FakeOpenAIServer;
  let fxBase: string;

  beforeAll(async () => {
    stack = await startEchoExpertStack({
      tag: "expert-call",
      onServer: { dev: await sharedWranglerDev(), skill: "expert-call" },
      experts: (model) => [
        fakeModelExpert(model, {
          name: "echo_expert",
          description: "Echoes the query through the fixture server and reports what came back.",
          internal_tools: { fx: ["echo", "add"] },
          budget: { max_steps: 4, timeout_ms: 30_000, max_output_tokens: 512, max_tool_calls: 4, max_tool_result_bytes: 4_096 },
        }),
      ],
    });
    ({ fake, fxBase } = stack);
  });

  afterAll(() => stack?.stop());

  beforeEach(async () => {
    await resetFixtureStats(fxBase);
    // Ask for one echo of the query, then answer with exactly what the tool gave back.
    fake.reset((request) => {
      const results = toolResultMessages(request);
      if (results.length > 0) return textReply(`downstream said: ${results.map((r) => r.content).join(" | ")}`);
      const user = request.messages.filter((m) => m.role === "user").at(-1);
      return toolCallsReply({ name: "fx__echo", arguments: { text: `token:${String(user?.content)}` } });
    });
  });

  const kinds: McpClientKind[] = ["v2-2025", "v2-2026"];
  for (const kind of kinds) {
    it(`answers through the model and the downstream server (${kind})`, async () => {
      const client = await connectMcpClient(kind, stack.mcpUrl);
      try {
        const tools = await client.listTools();
        expect(tools.map((tool) => tool.name)).toEqual(["echo_expert"]);

        const query = `hello-${kind}`;
        const result = await client.callTool("echo_expert", { query });
        expect(result.isError ?? false).toBe(false);
        expect(resultText(result)).toContain(`downstream said:`);
        expect(resultText(result)).toContain(`token:${query}`);

        // The model was offered exactly the whitelisted, namespaced tools, and saw the real result.
        expect(fake.requests).toHaveLength(2);
        expect(offeredToolNames(fake.requests[0]!).sort()).toEqual(["fx__add", "fx__echo"]);
        expect(
          toolResultMessages(fake.requests[1]!)
            .map((r) => r.content)
            .join(""),
        ).toContain(`token:${query}`);

        // The downstream fixture really ran the call.
        const stats = await readFixtureStats(fxBase);
        expect(stats.calls.echo).toBe(1);
        expect(stats.calls.sleep ?? 0).toBe(0);
      } finally {
        await client.close();
      }
    });
  }

  it("lists the expert with the MCP Inspector CLI", async () => {
    expect(await inspectorListToolNames(stack.mcpUrl)).toEqual(["echo_expert"]);
  });
});
