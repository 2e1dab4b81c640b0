import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EchoExpertStack, fakeModelExpert, startEchoExpertStack } from "./harness/echo-expert-stack";
import { offeredToolNames, textReply, toolCallsReply, toolResultMessages, type FakeOpenAIServer } from "./harness/fake-openai-server";
import { connectMcpClient, resultText, type McpClientKind } from "./harness/mcp-clients";
import { sharedWranglerDev } from "./harness/shared-wrangler-dev";

/**
 * Ask-back with real parts only: a real MCP client → `wrangler dev` → the fake OpenAI-compatible
 * model, which echoes through the fixture server and asks the orchestrator in the same step →
 * the paused run comes back as a question → the client replies with the thread and `answer` →
 * the model's next request holds the earlier echo result and the answer, and it finishes.
 */
describe("ask-back end to end", () => {
  let stack: EchoExpertStack;
  let fake: FakeOpenAIServer;

  beforeAll(async () => {
    stack = await startEchoExpertStack({
      tag: "ask-back",
      onServer: { dev: await sharedWranglerDev(), skill: "ask-back" },
      experts: (model) => [
        fakeModelExpert(model, {
          name: "asking_expert",
          description: "Looks something up, and asks when it needs to.",
          internal_tools: { fx: ["echo"] },
          ask_back: true,
          budget: { max_steps: 3, timeout_ms: 30_000, max_output_tokens: 512, max_tool_calls: 4, max_tool_result_bytes: 4_096 },
        }),
      ],
    });
    ({ fake } = stack);
    // First request: echo and ask at once. Once the answer is among the tool results: answer
    // with every tool result the request carried, so the test sees what the model was given.
    fake.reset((request) => {
      const results = toolResultMessages(request);
      if (results.length === 0) {
        const user = request.messages.filter((m) => m.role === "user").at(-1);
        return toolCallsReply(
          { name: "fx__echo", arguments: { text: `lookup:${String(user?.content).slice(-12)}` } },
          { name: "ask_orchestrator", arguments: { question: "Which region do you deploy to?" } },
        );
      }
      return textReply(`final with ${results.map((r) => r.content).join(" | ")}`);
    });
  });

  afterAll(() => stack?.stop());

  const kinds: McpClientKind[] = ["v2-2025", "v2-2026", "v1-http"];
  for (const kind of kinds) {
    it(`asks, then resumes with the earlier tool result and the answer (${kind})`, async () => {
      const client = await connectMcpClient(kind, stack.mcpUrl);
      try {
        const [tool] = await client.listTools();
        const properties = (tool?.inputSchema as { properties?: object } | undefined)?.properties ?? {};
        // `approve` only until a run has listed fx (no tool of it needs approval): the first client sees it, the later ones not.
        expect(
          Object.keys(properties)
            .filter((name) => name !== "approve")
            .sort(),
        ).toEqual(["answer", "query", "thread"]);

        const asked = await client.callTool("asking_expert", { query: `deploy plan ${kind}` });
        expect(asked.isError ?? false).toBe(false);
        const question = asked._meta?.["slipsnisse.dev/question"] as { question: string; thread: string; expiresAt: string };
        expect(question.question).toBe("Which region do you deploy to?");
        expect(question.thread).toMatch(/^th_/);
        expect(Date.parse(question.expiresAt)).toBeGreaterThan(Date.now());
        expect(resultText(asked)).toContain("The expert asks: Which region do you deploy to?");
        const requestsBefore = fake.requests.length;

        const answered = await client.callTool("asking_expert", { thread: question.thread, answer: `region-eu-${kind}` });
        expect(answered.isError ?? false).toBe(false);
        expect(answered._meta?.["slipsnisse.dev/question"]).toBeUndefined();
        // The echo result from before the pause and the answer both reached the model.
        expect(resultText(answered)).toContain(`lookup:${`deploy plan ${kind}`.slice(-12)}`);
        expect(resultText(answered)).toContain(`region-eu-${kind}`);
        const resumedRequest = fake.requests[requestsBefore];
        expect(resumedRequest && offeredToolNames(resumedRequest).sort()).toEqual(["ask_orchestrator", "ask_user", "fx__echo"]);
      } finally {
        await client.close();
      }
    });
  }
});
