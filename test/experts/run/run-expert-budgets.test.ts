import { describe, expect, it } from "vitest";
import { runExpert } from "../../../src/experts/run/run-expert";
import { makeExpert, makePolicy } from "../../support/expert-fixture";
import { FakeToolSource, textResult, wait } from "../../support/fake-tool-source";
import { scriptedModel } from "../../support/workers/scripted-model";

const never = <T>() => new Promise<T>(() => undefined);

describe("runExpert budgets", () => {
  it("max_steps: stops after the step budget, offers no tools on the last step, returns what was gathered", async () => {
    const source = new FakeToolSource({ docs: { search: { result: (args) => textResult(`hit for ${String(args.q)}`) }, read: {} } });
    const model = scriptedModel([{ calls: [{ name: "docs__search", input: { q: "a" } }] }, { calls: [{ name: "docs__search", input: { q: "b" } }] }]);
    const result = await runExpert({ expert: makeExpert({ budget: { max_steps: 3 } }), toolPolicy: makePolicy(), args: { query: "q" }, model, tools: source });

    expect(model.doGenerateCalls).toHaveLength(3);
    expect(model.doGenerateCalls[2]?.tools ?? []).toEqual([]);
    expect(model.doGenerateCalls[2]?.prompt[0]?.content).toContain("no tool calls left");
    expect(source.calls).toHaveLength(2);
    expect(result.outcome).toBe("budget_exhausted");
    expect(result.usage.budgetExhausted).toBe("steps");
    expect(result.text).toContain("hit for a");
    expect(result.text).toContain("hit for b");
    expect(result.text).toContain("budget exhausted (steps)");
    // The thread still gets what happened, ending with the returned text.
    expect(result.messages.at(-1)).toEqual({ role: "assistant", content: result.text });
  });

  it("max_steps: a call of its own tool on the tool-less last step is a budget stop, not a refusal; a tool it never had stays refused", async () => {
    const source = new FakeToolSource({ docs: { search: { result: () => textResult("hit") }, read: {} } });
    const steps = (last: string) =>
      scriptedModel([
        { calls: [{ name: "docs__search", input: { q: "a" } }] },
        { calls: [{ name: "docs__search", input: { q: "b" } }] },
        { calls: [{ name: last }] },
      ]);
    const run = (model: ReturnType<typeof steps>) =>
      runExpert({ expert: makeExpert({ budget: { max_steps: 3 } }), toolPolicy: makePolicy(), args: { query: "q" }, model, tools: source });

    const own = await run(steps("docs__search"));
    expect(own).toMatchObject({ outcome: "budget_exhausted", usage: { budgetExhausted: "steps", refusedToolCalls: 0 } });
    expect(own.steps[2]?.toolCalls).toMatchObject([{ name: "docs__search", status: "budget_stop" }]);
    expect(own.steps[2]?.toolCalls[0]?.server).toBeUndefined();

    const foreign = await run(steps("mail__send"));
    expect(foreign.usage.refusedToolCalls).toBe(1);
    expect(foreign.steps[2]?.toolCalls).toMatchObject([{ name: "mail__send", status: "refused" }]);
  });

  it("timeout_ms: a hanging tool is cut at the wall-clock budget", async () => {
    const source = new FakeToolSource({ docs: { search: { result: () => never() }, read: {} } });
    const model = scriptedModel([{ calls: [{ name: "docs__search" }] }, { text: "never reached" }]);
    // What this run waits on never answers: it can only end through the budget's abort.
    const result = await runExpert({
      expert: makeExpert({ budget: { timeout_ms: 1000 } }),
      toolPolicy: makePolicy(),
      args: { query: "q" },
      model,
      tools: source,
    });

    expect(result.outcome).toBe("budget_exhausted");
    expect(result.usage.budgetExhausted).toBe("timeout");
    expect(result.text).toContain("budget exhausted (timeout)");
    expect(source.calls[0]?.hadSignal).toBe(true);
  });

  it("timeout_ms: a hanging model is cut, and the model call got the aborting signal", async () => {
    let modelSignal: AbortSignal | undefined;
    const source = new FakeToolSource({ docs: { search: { result: textResult("fact A") }, read: {} } });
    const model = scriptedModel([
      { calls: [{ name: "docs__search" }] },
      (options) => {
        modelSignal = options.abortSignal;
        return never();
      },
    ]);
    // What this run waits on never answers: it can only end through the budget's abort.
    const result = await runExpert({
      expert: makeExpert({ budget: { timeout_ms: 1000 } }),
      toolPolicy: makePolicy(),
      args: { query: "q" },
      model,
      tools: source,
    });

    expect(result).toMatchObject({ outcome: "budget_exhausted", usage: { budgetExhausted: "timeout", steps: 1, toolCalls: 1 } });
    expect(modelSignal?.aborted).toBe(true);
    expect(result.text).toContain("fact A");
  });

  it("max_tool_calls: calls past the budget are refused with a budget message and the loop stops", async () => {
    const source = new FakeToolSource({ docs: { search: {}, read: {} } });
    const model = scriptedModel([{ calls: [{ name: "docs__search" }, { name: "docs__read" }, { name: "docs__search" }] }, { text: "never asked" }]);
    const result = await runExpert({
      expert: makeExpert({ budget: { max_tool_calls: 2 } }),
      toolPolicy: makePolicy(),
      args: { query: "q" },
      model,
      tools: source,
    });

    expect(source.calls).toHaveLength(2);
    expect(model.doGenerateCalls).toHaveLength(1);
    expect(result).toMatchObject({ outcome: "budget_exhausted", usage: { budgetExhausted: "tool_calls", toolCalls: 2, refusedToolCalls: 1 } });
    const statuses = result.steps[0]?.toolCalls.map((c) => c.status);
    expect(statuses?.filter((s) => s === "refused")).toHaveLength(1);
    expect(result.text).toContain("budget exhausted (tool_calls)");
  });

  it("max_tool_calls: spending exactly the budget lets the model answer on a tool-less step", async () => {
    const source = new FakeToolSource({ docs: { search: {}, read: {} } });
    const model = scriptedModel([{ calls: [{ name: "docs__search" }, { name: "docs__read" }] }, { text: "answer from two calls" }]);
    const result = await runExpert({
      expert: makeExpert({ budget: { max_tool_calls: 2 } }),
      toolPolicy: makePolicy(),
      args: { query: "q" },
      model,
      tools: source,
    });
    expect(model.doGenerateCalls[1]?.tools ?? []).toEqual([]);
    expect(result).toMatchObject({ outcome: "ok", text: "answer from two calls", usage: { toolCalls: 2, budgetExhausted: null } });
  });

  it("max_tool_result_bytes: a long result is cut at a UTF-8 boundary with a marker", async () => {
    const long = "é".repeat(500); // 1000 bytes, every character two bytes
    const source = new FakeToolSource({ docs: { search: { result: textResult(long) }, read: {} } });
    const model = scriptedModel([{ calls: [{ name: "docs__search" }] }, { text: "done" }]);
    const result = await runExpert({
      expert: makeExpert({ budget: { max_tool_result_bytes: 257 } }),
      toolPolicy: makePolicy(),
      args: { query: "q" },
      model,
      tools: source,
    });
    const toolMessage = model.doGenerateCalls[1]?.prompt.find((m) => m.role === "tool");
    const seen = JSON.stringify(toolMessage?.content);
    expect(seen).toContain(`${"é".repeat(128)}\\n[… truncated: showed 256 of 1000 bytes]`);
    expect(seen).not.toContain("\uFFFD");
    expect(result.steps[0]?.toolCalls[0]).toMatchObject({ status: "truncated", bytes: 1000 });
    expect(result.usage.downstreamBytesRead).toBe(1000);
  });

  it("max_output_tokens: passes the remainder per step and stops when the run's total is spent", async () => {
    const source = new FakeToolSource({ docs: { search: {}, read: {} } });
    const model = scriptedModel([
      { calls: [{ name: "docs__search" }], outputTokens: 12 },
      { calls: [{ name: "docs__read" }], outputTokens: 8 },
      { text: "never asked" },
    ]);
    const result = await runExpert({
      expert: makeExpert({ budget: { max_output_tokens: 20 } }),
      toolPolicy: makePolicy(),
      args: { query: "q" },
      model,
      tools: source,
    });

    expect(model.doGenerateCalls.map((c) => c.maxOutputTokens)).toEqual([20, 8]);
    expect(result).toMatchObject({ outcome: "budget_exhausted", usage: { budgetExhausted: "output_tokens", outputTokens: 20 } });
    expect(result.text).toContain("budget exhausted (output_tokens)");
  });

  it("max_output_tokens: an answer cut at the token limit is returned with the note", async () => {
    const model = scriptedModel([{ text: "The answer is parti", finish: "length", outputTokens: 16 }]);
    const result = await runExpert({
      expert: makeExpert({ budget: { max_output_tokens: 16 } }),
      toolPolicy: makePolicy(),
      args: { query: "q" },
      model,
      tools: new FakeToolSource({ docs: { search: {}, read: {} } }),
    });
    expect(result.outcome).toBe("budget_exhausted");
    expect(result.text.startsWith("The answer is parti")).toBe(true);
    expect(result.text).toContain("budget exhausted (output_tokens)");
  });

  it("a well-behaved downstream call sees its signal abort at the timeout", async () => {
    let toolSignal: AbortSignal | undefined;
    const source = new FakeToolSource({
      docs: {
        search: {
          result: async (_args, signal) => {
            toolSignal = signal;
            await wait(10_000, signal);
            return textResult("late");
          },
        },
        read: {},
      },
    });
    const model = scriptedModel([{ calls: [{ name: "docs__search" }] }]);
    const result = await runExpert({
      expert: makeExpert({ budget: { timeout_ms: 1000 } }),
      toolPolicy: makePolicy(),
      args: { query: "q" },
      model,
      tools: source,
    });
    expect(result.usage.budgetExhausted).toBe("timeout");
    expect(toolSignal?.aborted).toBe(true);
  });
});
