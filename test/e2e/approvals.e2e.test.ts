import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readFixtureStats } from "../fixtures/fixture-stats-client";
import { type EchoExpertStack, fakeModelExpert, startEchoExpertStack } from "./harness/echo-expert-stack";
import { textReply, toolCallsReply, toolResultMessages, type FakeOpenAIServer } from "./harness/fake-openai-server";
import { connectMcpClient, resultText, type ElicitReply, type McpClientKind, type ToolCallResult } from "./harness/mcp-clients";
import { sharedWranglerDev } from "./harness/shared-wrangler-dev";

/**
 * Approvals with real parts only: a real MCP client → `wrangler dev` → the fake model, which calls
 * the fixture's `erase` (annotated destructiveHint, so it needs approval by default) → the user
 * approves or declines through the client's elicitation handler, or, for a client that cannot be
 * asked, the orchestrator gets "approval needed" and resumes with `approve`.
 */
describe("approvals end to end", () => {
  let stack: EchoExpertStack;
  let fake: FakeOpenAIServer;

  beforeAll(async () => {
    stack = await startEchoExpertStack({
      tag: "approvals",
      onServer: { dev: await sharedWranglerDev(), skill: "approvals" },
      experts: (model) => [
        fakeModelExpert(model, {
          name: "cleaner",
          description: "Erases records on request.",
          internal_tools: { fx: ["erase"] },
          budget: { max_steps: 3, timeout_ms: 30_000, max_output_tokens: 512, max_tool_calls: 4, max_tool_result_bytes: 4_096 },
        }),
      ],
    });
    ({ fake } = stack);
    // First request of a run: erase the record the query names. Once a result is back (the
    // erase, or its refusal): answer with every tool result the request carried.
    fake.reset((request) => {
      const results = toolResultMessages(request);
      if (results.length === 0) {
        const user = request.messages.filter((m) => m.role === "user").at(-1);
        return toolCallsReply({ name: "fx__erase", arguments: { record: String(user?.content).split(" ").at(-1) } });
      }
      return textReply(`final with ${results.map((r) => r.content).join(" | ")}`);
    });
  });

  afterAll(() => stack?.stop());

  /** The "user": notes what the client showed, then answers. */
  const answerAs = (shown: string[], message: string, reply: ElicitReply) => {
    shown.push(message);
    return reply;
  };
  const erases = async () => (await readFixtureStats(stack.fxBase)).calls.erase ?? 0;
  const approve: ElicitReply = { action: "accept", content: { approve: true } };
  const decline: ElicitReply = { action: "decline" };

  // 2026-07-28: input_required, fulfilled inside callTool; legacy SSE and stateless 2025
  // Streamable HTTP: elicitation/create mid-call, on the call's own stream.
  const elicited: Array<[McpClientKind, ElicitReply, number]> = [
    ["v2-2026", approve, 1],
    ["v2-2026", decline, 0],
    ["v1-sse", approve, 1],
    ["v1-sse", decline, 0],
    ["v2-sse", approve, 1],
    ["v2-sse-2025-06-18", approve, 1],
    ["v2-sse-2025-06-18", decline, 0],
    ["v2-2025", approve, 1],
    ["v2-2025", decline, 0],
    ["v2-2025-06-18", approve, 1],
    ["v1-http", approve, 1],
  ];
  for (const [kind, reply, runs] of elicited) {
    it(`the user ${reply.action === "accept" ? "approves" : "declines"} through elicitation (${kind})`, async () => {
      const shown: string[] = [];
      const url = kind.includes("-sse") ? stack.sseUrl : stack.mcpUrl;
      const client = await connectMcpClient(kind, url, { elicit: (message) => answerAs(shown, message, reply) });
      try {
        if (kind.endsWith("2025-06-18")) expect(client.protocolVersion).toBe("2025-06-18");
        const before = await erases();
        const record = `rec-${kind}-${reply.action}`;
        const result = await client.callTool("cleaner", { query: `Erase ${record}` });
        expect(result.isError ?? false).toBe(false);
        expect(shown).toHaveLength(1);
        expect(shown[0]).toContain("fx__erase");
        expect(shown[0]).toContain(record);
        expect(await erases()).toBe(before + runs);
        expect(resultText(result)).toContain(runs === 1 ? `erased ${record}` : "needed approval and the user declined it");
      } finally {
        await client.close();
      }
    });
  }

  // No elicitation declared.
  const paused: Array<[McpClientKind, boolean]> = [
    ["v1-http", false],
    ["v2-2025", false],
  ];
  for (const [kind, declares] of paused) {
    it(`a client that cannot be asked gets "approval needed", then resumes with approve (${kind}${declares ? ", declaring elicitation" : ""})`, async () => {
      const shown: string[] = [];
      const client = await connectMcpClient(kind, stack.mcpUrl, declares ? { elicit: (message) => answerAs(shown, message, approve) } : {});
      try {
        const before = await erases();
        const record = `rec-${kind}-${declares}`;
        const asked: ToolCallResult = await client.callTool("cleaner", { query: `Erase ${record}` });
        const question = asked._meta?.["slipsnisse.dev/question"] as { thread: string; for: string; approvals: Array<{ name: string; input: string }> };
        expect(question).toMatchObject({ for: "approval", approvals: [{ name: "fx__erase", input: JSON.stringify({ record }) }] });
        expect(resultText(asked)).toContain('"approve": true');
        expect(await erases()).toBe(before);

        const resumed = await client.callTool("cleaner", { query: `Erase ${record}`, thread: question.thread, approve: true });
        expect(resumed.isError ?? false).toBe(false);
        expect(resultText(resumed)).toContain(`erased ${record}`);
        expect(await erases()).toBe(before + 1);
        expect(shown).toEqual([]);
      } finally {
        await client.close();
      }
    });
  }
});
