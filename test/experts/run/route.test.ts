import { describe, expect, it } from "vitest";
import { runExpert } from "../../../src/experts/run/run-expert";
import type { StepProgress } from "../../../src/experts/core/run-types";
import { makeExpert, makePolicy } from "../../support/expert-fixture";
import { FakeToolSource, textResult, wait } from "../../support/fake-tool-source";
import { scriptedModel } from "../../support/workers/scripted-model";

const servers = () =>
  new FakeToolSource({
    docs: { search: { result: (args) => textResult(`search hits for ${String(args.q)}\n- readme#budgets`) }, read: {}, delete_all: {} },
  });
const routeExpert = (budget = {}) => makeExpert({ mode: "route", budget });

describe("runExpert in route mode", () => {
  it("returns the chosen downstream result as is, with exactly one model call and toolChoice required", async () => {
    const source = servers();
    const progress: StepProgress[] = [];
    const model = scriptedModel([{ calls: [{ name: "docs__search", input: { q: "budgets" } }], outputTokens: 9 }, { text: "a second call must not happen" }]);
    const result = await runExpert({
      expert: routeExpert(),
      toolPolicy: makePolicy(),
      args: { query: "budgets" },
      model,
      tools: source,
      onStep: (p) => progress.push(p),
    });

    expect(result.outcome).toBe("ok");
    expect(result.text).toBe("search hits for budgets\n- readme#budgets");
    expect(model.doGenerateCalls).toHaveLength(1);
    expect(model.doGenerateCalls[0]?.toolChoice).toEqual({ type: "required" });
    expect(model.doGenerateCalls[0]?.tools?.map((t) => t.name).sort()).toEqual(["docs__read", "docs__search"]);
    expect(source.calls.map((c) => [c.toolName, c.args, c.hadSignal])).toEqual([["search", { q: "budgets" }, true]]);
    expect(result.usage).toMatchObject({ steps: 1, toolCalls: 1, outputTokens: 9, refusedToolCalls: 0, budgetExhausted: null });
    expect(result.steps[0]?.toolCalls.map((c) => [c.name, c.status])).toEqual([["docs__search", "ok"]]);
    expect(progress).toEqual([{ step: 1, maxSteps: 1, message: "calling docs__search" }]);
    // The thread keeps the request and the returned result only.
    expect(result.messages.map((m) => m.role)).toEqual(["user", "assistant"]);
    expect(result.messages[1]?.content).toBe(result.text);
  });

  it("executes only the first valid call when the model emits several", async () => {
    const source = servers();
    const model = scriptedModel([{ calls: [{ name: "docs__read" }, { name: "docs__search", input: { q: "x" } }] }]);
    const result = await runExpert({ expert: routeExpert(), toolPolicy: makePolicy(), args: { query: "q" }, model, tools: source });
    expect(result.text).toBe("read result");
    expect(source.calls.map((c) => c.toolName)).toEqual(["read"]);
  });

  it("refuses a non-whitelisted or blocked choice without executing it, and says so", async () => {
    const source = servers();
    const model = scriptedModel([{ calls: [{ name: "docs__delete_all" }, { name: "docs__read" }] }]);
    const progress: StepProgress[] = [];
    const result = await runExpert({
      expert: routeExpert(),
      toolPolicy: makePolicy({ blocked: ["*__read"] }),
      args: { query: "wipe it" },
      model,
      tools: source,
      onStep: (p) => progress.push(p),
    });
    expect(result.outcome).toBe("error");
    expect(source.calls).toEqual([]);
    expect(model.doGenerateCalls).toHaveLength(1);
    expect(result.error?.kind).toBe("route-without-tool-call");
    expect(result.text).toContain('Expert "research" (route mode) returned no result');
    expect(result.text).toContain('"docs__delete_all", "docs__read"');
    expect(result.usage.refusedToolCalls).toBe(2);
    expect(result.messages).toEqual([]);
    expect(progress.map((p) => p.message)).toEqual(["refused docs__delete_all, docs__read (not available to this expert)"]);
  });

  it("is an error with a plain message when the model answers in text instead of calling a tool", async () => {
    const model = scriptedModel([{ text: "I think the answer is 42." }]);
    const result = await runExpert({ expert: routeExpert(), toolPolicy: makePolicy(), args: { query: "q" }, model, tools: servers() });
    expect(result.outcome).toBe("error");
    expect(result.text).toMatch(/^Expert "research" \(route mode\) returned no result: its model did not call any tool\. Rephrase/);
    expect(model.doGenerateCalls).toHaveLength(1);
  });

  it("truncates the routed result to max_tool_result_bytes", async () => {
    const source = new FakeToolSource({ docs: { search: { result: textResult("x".repeat(5_000)) } } });
    const model = scriptedModel([{ calls: [{ name: "docs__search", input: { q: "big" } }] }]);
    const result = await runExpert({
      expert: routeExpert({ max_tool_result_bytes: 300 }),
      toolPolicy: makePolicy(),
      args: { query: "q" },
      model,
      tools: source,
    });
    expect(result.outcome).toBe("ok");
    expect(new TextEncoder().encode(result.text).length).toBeLessThan(600);
    expect(result.usage.downstreamBytesRead).toBe(5_000);
    expect(result.steps[0]?.toolCalls[0]?.status).toBe("truncated");
  });

  it("stops a slow downstream call at the run's timeout", async () => {
    const source = new FakeToolSource({
      docs: {
        search: {
          result: async (_args, signal) => {
            await wait(10_000, signal);
            return textResult("late");
          },
        },
      },
    });
    const model = scriptedModel([{ calls: [{ name: "docs__search", input: { q: "slow" } }] }]);
    const result = await runExpert({ expert: routeExpert({ timeout_ms: 1_000 }), toolPolicy: makePolicy(), args: { query: "q" }, model, tools: source });
    expect(result.outcome).toBe("budget_exhausted");
    expect(result.usage.budgetExhausted).toBe("timeout");
  });
});
