import { describe, expect, it } from "vitest";
import { runExpert } from "../../../src/experts/run/run-expert";
import type { StepProgress } from "../../../src/experts/core/run-types";
import { makeExpert, makePolicy } from "../../support/expert-fixture";
import { Rendezvous } from "../../support/wait-for";
import { FakeToolSource, textResult } from "../../support/fake-tool-source";
import { scriptedModel } from "../../support/workers/scripted-model";

describe("runExpert answers", () => {
  it("returns the model's final text after executing its whitelisted tool calls", async () => {
    const source = new FakeToolSource({ docs: { search: { result: textResult("Hono 4.13 adds X") }, read: {} } });
    const model = scriptedModel([{ calls: [{ name: "docs__search", input: { q: "hono" } }] }, { text: "Hono 4.13 adds X (docs__search)." }]);
    const result = await runExpert({ expert: makeExpert(), toolPolicy: makePolicy(), args: { query: "What is new in Hono?" }, model, tools: source });

    expect(result.outcome).toBe("ok");
    expect(result.text).toBe("Hono 4.13 adds X (docs__search).");
    expect(source.calls).toMatchObject([{ serverId: "docs", toolName: "search", args: { q: "hono" }, hadSignal: true }]);
    expect(result.usage).toMatchObject({ steps: 2, toolCalls: 1, refusedToolCalls: 0, inputTokens: 20, outputTokens: 10, budgetExhausted: null });
    expect(result.usage.downstreamBytesRead).toBe(new TextEncoder().encode("Hono 4.13 adds X").byteLength);
    expect(result.usage.bytesReturned).toBe(new TextEncoder().encode(result.text).byteLength);
    expect(result.steps[0]?.toolCalls).toMatchObject([{ name: "docs__search", status: "ok" }]);

    // The model saw exactly the whitelisted tools, namespaced, and the query as the user turn.
    const first = model.doGenerateCalls[0];
    expect(first?.tools?.map((tool) => tool.name).sort()).toEqual(["docs__read", "docs__search"]);
    expect(first?.prompt.find((m) => m.role === "user")?.content).toEqual([{ type: "text", text: "What is new in Hono?" }]);
    expect(first?.prompt[0]?.role).toBe("system");
    // The thread gets the user turn and the model's turns.
    expect(result.messages[0]).toEqual({ role: "user", content: "What is new in Hono?" });
    expect(result.messages.at(-1)?.role).toBe("assistant");
  });

  it("uses the expert's system prompt, renders non-query args, and sends thread history first", async () => {
    const model = scriptedModel([{ text: "ok" }]);
    await runExpert({
      expert: makeExpert({ system_prompt: "You are the Hono expert." }),
      toolPolicy: makePolicy(),
      args: { query: "versions?", package: "hono", limit: 3 },
      history: [
        { role: "user", content: "earlier question" },
        { role: "assistant", content: "earlier answer" },
      ],
      model,
      tools: new FakeToolSource({ docs: { search: {}, read: {} } }),
    });
    const prompt = model.doGenerateCalls[0]?.prompt ?? [];
    expect(prompt[0]).toMatchObject({ role: "system", content: "You are the Hono expert." });
    expect(prompt.map((m) => m.role)).toEqual(["system", "user", "assistant", "user"]);
    expect(prompt[3]?.content).toEqual([{ type: "text", text: "versions?\n\npackage: hono\nlimit: 3" }]);
  });

  it("runs the tool calls of one step in parallel", async () => {
    // Each call answers only once all three are in flight: run one at a time, none ever would.
    const together = new Rendezvous(3);
    const meet = {
      result: async () => {
        await together.arrive();
        return textResult("done");
      },
    };
    const source = new FakeToolSource({ docs: { search: meet, read: meet } });
    const model = scriptedModel([{ calls: [{ name: "docs__search" }, { name: "docs__read" }, { name: "docs__search" }] }, { text: "all three done" }]);
    const result = await runExpert({ expert: makeExpert(), toolPolicy: makePolicy(), args: { query: "q" }, model, tools: source });

    expect(result.outcome).toBe("ok");
    expect(result.steps[0]?.toolCalls.map((call) => call.status)).toEqual(["ok", "ok", "ok"]);
    expect(together.peak).toBe(3);
  });

  it("reports progress once per step with what the sub-agent is doing", async () => {
    const progress: StepProgress[] = [];
    const model = scriptedModel([{ calls: [{ name: "docs__search" }, { name: "docs__read" }] }, { text: "answer" }]);
    await runExpert({
      expert: makeExpert({ budget: { max_steps: 5 } }),
      toolPolicy: makePolicy(),
      args: { query: "q" },
      model,
      tools: new FakeToolSource({ docs: { search: {}, read: {} } }),
      onStep: (p) => progress.push(p),
    });
    expect(progress).toEqual([
      { step: 1, maxSteps: 5, message: "calling docs__search, docs__read" },
      { step: 2, maxSteps: 5, message: "writing the answer" },
    ]);
  });

  it("keeps running when the progress callback throws", async () => {
    const result = await runExpert({
      expert: makeExpert(),
      toolPolicy: makePolicy(),
      args: { query: "q" },
      model: scriptedModel([{ calls: [{ name: "docs__search" }] }, { text: "fine" }]),
      tools: new FakeToolSource({ docs: { search: {}, read: {} } }),
      onStep: () => {
        throw new Error("caller went away");
      },
    });
    expect(result).toMatchObject({ outcome: "ok", text: "fine" });
  });
});
