import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { generateText, isStepCount, jsonSchema, streamText, tool } from "ai";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { offeredToolNames, startFakeOpenAI, textReply, toolCallsReply, toolResultMessages, type FakeOpenAIServer } from "./harness/fake-openai-server";

describe("fake OpenAI-compatible model", () => {
  let fake: FakeOpenAIServer;
  beforeAll(async () => {
    fake = await startFakeOpenAI();
  });
  beforeEach(() => fake.reset());
  afterAll(async () => {
    await fake.close();
  });

  const model = () => createOpenAICompatible({ name: "fake", baseURL: fake.baseURL, apiKey: "k" }).chatModel("cheap-1");
  const addTool = tool({
    description: "adds two numbers",
    inputSchema: jsonSchema<{ a: number; b: number }>({
      type: "object",
      properties: { a: { type: "number" }, b: { type: "number" } },
      required: ["a", "b"],
    }),
    execute: async ({ a, b }) => ({ sum: a + b }),
  });

  it("answers a text reply with its usage", async () => {
    fake.reset([textReply("hello from fake", { prompt_tokens: 7, completion_tokens: 3 })]);
    const result = await generateText({ model: model(), prompt: "hi" });
    expect(result.text).toBe("hello from fake");
    expect(result.usage.inputTokens).toBe(7);
    expect(result.usage.outputTokens).toBe(3);
    expect(fake.requests[0]?.model).toBe("cheap-1");
  });

  it("runs a tool-call round and records the offered tools and the tool result", async () => {
    fake.reset([toolCallsReply({ name: "calc__add", arguments: { a: 2, b: 40 } }), textReply("the sum is 42")]);
    const result = await generateText({
      model: model(),
      prompt: "add 2 and 40",
      tools: { calc__add: addTool },
      stopWhen: isStepCount(3),
    });
    expect(result.text).toBe("the sum is 42");
    expect(result.steps).toHaveLength(2);
    expect(fake.requests).toHaveLength(2);
    expect(offeredToolNames(fake.requests[0]!)).toEqual(["calc__add"]);
    const [toolResult] = toolResultMessages(fake.requests[1]!);
    expect(JSON.parse(toolResult?.content ?? "null")).toEqual({ sum: 42 });
  });

  it("streams text and parallel tool calls as SSE", async () => {
    fake.reset((request) =>
      toolResultMessages(request).length === 0
        ? toolCallsReply({ name: "calc__add", arguments: { a: 1, b: 1 } }, { name: "calc__add", arguments: { a: 2, b: 2 } })
        : textReply(
            `got ${toolResultMessages(request)
              .map((m) => m.content)
              .join(" and ")}`,
          ),
    );
    const result = streamText({ model: model(), prompt: "two sums", tools: { calc__add: addTool }, stopWhen: isStepCount(3) });
    expect(await result.text).toBe('got {"sum":2} and {"sum":4}');
    expect(fake.requests.every((r) => r.stream === true)).toBe(true);
  });

  it("answers 404 on unknown paths and 500 when the script runs out", async () => {
    const origin = new URL(fake.baseURL).origin;
    const unknown = await fetch(`${origin}/v1/embeddings`, { method: "POST", body: "{}" });
    expect(unknown.status).toBe(404);
    await expect(generateText({ model: model(), prompt: "x", maxRetries: 0 })).rejects.toThrow(/no scripted reply left/);
  });

  it("adds the configured delay", async () => {
    fake.reset([{ ...textReply("slow"), delayMs: 120 }]);
    const started = performance.now();
    await generateText({ model: model(), prompt: "x" });
    expect(performance.now() - started).toBeGreaterThanOrEqual(115);
  });
});
