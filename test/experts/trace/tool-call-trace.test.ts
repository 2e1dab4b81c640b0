import { describe, expect, it } from "vitest";
import { ToolWithheldError } from "../../../src/downstream/tool-pin-errors";
import { runExpert } from "../../../src/experts/run/run-expert";
import { makeExpert, makePolicy } from "../../support/expert-fixture";
import { FakeToolSource, textResult, wait } from "../../support/fake-tool-source";
import { scriptedModel } from "../../support/workers/scripted-model";

const expert = () => makeExpert({ internal_tools: { docs: ["search", "read"] } });

describe("tool calls in the trace", () => {
  it("records the server, tool, arguments and the start of the result of a call", async () => {
    const source = new FakeToolSource({ docs: { search: { result: textResult("x".repeat(5_000)) }, read: {} } });
    const result = await runExpert({
      expert: expert(),
      toolPolicy: makePolicy(),
      args: { query: "q" },
      model: scriptedModel([{ calls: [{ name: "docs__search", input: { q: "budgets" } }] }, { text: "done" }]),
      tools: source,
    });
    const [call] = result.steps[0]?.toolCalls ?? [];
    expect(call).toMatchObject({ server: "docs", tool: "search", status: "ok", args: JSON.stringify({ q: "budgets" }) });
    // Kept raw but bounded while the run goes on (the session redacts and cuts it to 1 KB).
    expect(call?.result?.length).toBeLessThan(5_000);
    expect(call?.result?.startsWith("xxxx")).toBe(true);
  });

  it("says withheld for a tool whose definition changed after it was offered", async () => {
    const source = new FakeToolSource({
      docs: { search: { result: () => Promise.reject(new ToolWithheldError("s", "docs", "search", "changed its definition")) }, read: {} },
    });
    const result = await runExpert({
      expert: expert(),
      toolPolicy: makePolicy(),
      args: { query: "q" },
      model: scriptedModel([{ calls: [{ name: "docs__search", input: { q: "x" } }] }, { text: "done" }]),
      tools: source,
    });
    expect(result.steps[0]?.toolCalls).toMatchObject([{ name: "docs__search", server: "docs", tool: "search", status: "withheld" }]);
  });

  it("says cancelled for a call the caller's cancel cut off mid-step, and keeps it in the result", async () => {
    let started: () => void = () => {};
    const callStarted = new Promise<void>((resolve) => (started = resolve));
    const source = new FakeToolSource({
      docs: {
        search: {
          result: async (_args, signal) => {
            started();
            await wait(10_000, signal);
            return textResult("late");
          },
        },
        read: {},
      },
    });
    const controller = new AbortController();
    void callStarted.then(() => controller.abort(new DOMException("client went away", "AbortError")));
    const result = await runExpert({
      expert: expert(),
      toolPolicy: makePolicy(),
      args: { query: "q" },
      model: scriptedModel([{ calls: [{ name: "docs__search", input: { q: "slow" } }] }, { text: "never" }]),
      tools: source,
      signal: controller.signal,
    });
    expect(result.outcome).toBe("cancelled");
    // The step never finished, so the call is not in any step: the result still carries it.
    expect(result.steps).toEqual([]);
    expect(result.unfinishedToolCalls).toMatchObject([
      { name: "docs__search", server: "docs", tool: "search", status: "cancelled", args: JSON.stringify({ q: "slow" }) },
    ]);
  });
});
