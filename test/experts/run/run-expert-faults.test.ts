import { APICallError } from "ai";
import { afterEach, describe, expect, it, vi } from "vitest";
import { runExpert } from "../../../src/experts/run/run-expert";
import { MAX_MALFORMED_TOOL_INPUTS } from "../../../src/experts/run/synthesize";
import { makeExpert, makePolicy } from "../../support/expert-fixture";
import { FakeToolSource, textResult } from "../../support/fake-tool-source";
import { scriptedModel } from "../../support/workers/scripted-model";

/** Settles only when `signal` aborts (rejecting with its reason), like a server call that never answers. */
function untilAborted(signal: AbortSignal | undefined): Promise<never> {
  return new Promise((_, reject) => {
    if (signal === undefined) return;
    signal.addEventListener("abort", () => reject(signal.reason), { once: true });
  });
}

function apiError(statusCode: number, headers: Record<string, string> = {}): APICallError {
  return new APICallError({
    message: `HTTP ${statusCode}`,
    url: "https://api.example.test/v1/chat/completions",
    requestBodyValues: {},
    statusCode,
    responseHeaders: headers,
    isRetryable: statusCode === 429 || statusCode >= 500,
  });
}

const docs = () =>
  new FakeToolSource({ docs: { search: { inputSchema: { type: "object", properties: { q: { type: "string" } }, required: ["q"] } }, read: {} } });

describe("runExpert faults", () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it("a caller's cancel aborts the downstream call and ends the run as cancelled", async () => {
    let toolSignal: AbortSignal | undefined;
    const controller = new AbortController();
    // The caller goes away once the downstream call is in flight; the call itself never settles
    // unless its signal aborts, so a cancel that does not reach it hangs the test.
    const source = new FakeToolSource({
      docs: {
        search: {
          result: async (_a, signal) => {
            toolSignal = signal;
            const pending = untilAborted(signal);
            controller.abort(new DOMException("client went away", "AbortError"));
            await pending;
            return textResult("late");
          },
        },
        read: {},
      },
    });
    const result = await runExpert({
      expert: makeExpert(),
      toolPolicy: makePolicy(),
      args: { query: "q" },
      model: scriptedModel([{ calls: [{ name: "docs__search", input: { q: "x" } }] }, { text: "never" }]),
      tools: source,
      signal: controller.signal,
    });
    expect(result.outcome).toBe("cancelled");
    expect(result.usage.budgetExhausted).toBeNull();
    expect(toolSignal?.aborted).toBe(true);
    expect(result.messages).toEqual([]);
  });

  it("a signal already aborted ends the run before the model is called", async () => {
    const model = scriptedModel([{ text: "never" }]);
    const result = await runExpert({ expert: makeExpert(), toolPolicy: makePolicy(), args: { query: "q" }, model, tools: docs(), signal: AbortSignal.abort() });
    expect(result.outcome).toBe("cancelled");
    expect(model.doGenerateCalls).toHaveLength(0);
  });

  it("a rejected key becomes an error naming the expert, provider and model, and the fix", async () => {
    const model = scriptedModel([() => Promise.reject(apiError(401))]);
    const result = await runExpert({
      expert: makeExpert({ provider: "google", model: "gemini-2.5-flash" }),
      toolPolicy: makePolicy(),
      args: { query: "q" },
      model,
      tools: docs(),
    });
    expect(result.outcome).toBe("error");
    expect(result.error?.kind).toBe("model-auth-rejected");
    expect(result.text).toContain('expert "research"');
    expect(result.text).toContain("google");
    expect(result.text).toContain("GOOGLE_GENERATIVE_AI_API_KEY");
    expect(model.doGenerateCalls).toHaveLength(1); // 401 is not retried
  });

  it("retries a 429 after the Retry-After it names and completes when the provider recovers", async () => {
    const model = scriptedModel([() => Promise.reject(apiError(429, { "retry-after-ms": "50" })), { text: "recovered" }]);
    const result = await runExpert({ expert: makeExpert(), toolPolicy: makePolicy(), args: { query: "q" }, model, tools: docs() });
    expect(result).toMatchObject({ outcome: "ok", text: "recovered", usage: { retries: 1 } });
    expect(model.doGenerateCalls).toHaveLength(2);
  });

  it("a 429 before every step's answer is retried inside a 4 s budget, and the retries are counted", async () => {
    // The AI SDK's own retries waited 2 s each, so two rate-limited steps outlasted the budget.
    const rateLimited = () => Promise.reject(apiError(429));
    const model = scriptedModel([rateLimited, { calls: [{ name: "docs__search", input: { q: "x" } }] }, rateLimited, { text: "answered" }]);
    const result = await runExpert({
      expert: makeExpert({ budget: { timeout_ms: 4_000 } }),
      toolPolicy: makePolicy(),
      args: { query: "q" },
      model,
      tools: docs(),
    });
    expect(result).toMatchObject({ outcome: "ok", text: "answered", usage: { steps: 2, retries: 2, budgetExhausted: null } });
    expect(model.doGenerateCalls).toHaveLength(4);
  });

  it("a Retry-After longer than the time left ends the run at once as rate-limited, without a retry", async () => {
    const model = scriptedModel([() => Promise.reject(apiError(429, { "retry-after": "30" })), { text: "never" }]);
    const result = await runExpert({
      expert: makeExpert({ budget: { timeout_ms: 4_000 } }),
      toolPolicy: makePolicy(),
      args: { query: "q" },
      model,
      tools: docs(),
    });
    expect(result).toMatchObject({ outcome: "error", error: { kind: "model-rate-limited" }, usage: { retries: 0, budgetExhausted: "timeout" } });
    expect(result.text).toContain("asked to wait 30000 ms");
    expect(model.doGenerateCalls).toHaveLength(1);
  });

  it("a caller's cancel during a retry wait ends the run as cancelled without another attempt", async () => {
    const controller = new AbortController();
    // The caller goes away once the runner has logged the retry and started its 5 s wait.
    vi.spyOn(console, "warn").mockImplementation((line: unknown) => {
      if (String(line).includes("model call retried")) queueMicrotask(() => controller.abort(new DOMException("client went away", "AbortError")));
    });
    const model = scriptedModel([() => Promise.reject(apiError(503, { "retry-after-ms": "5000" })), { text: "never" }]);
    const result = await runExpert({
      expert: makeExpert({ budget: { timeout_ms: 20_000 } }),
      toolPolicy: makePolicy(),
      args: { query: "q" },
      model,
      tools: docs(),
      signal: controller.signal,
    });
    expect(result.outcome).toBe("cancelled");
    expect(model.doGenerateCalls).toHaveLength(1);
  });

  it("a non-retryable provider error is not retried", async () => {
    const model = scriptedModel([() => Promise.reject(apiError(400)), { text: "never" }]);
    const result = await runExpert({ expert: makeExpert(), toolPolicy: makePolicy(), args: { query: "q" }, model, tools: docs() });
    expect(result).toMatchObject({ outcome: "error", usage: { retries: 0 } });
    expect(model.doGenerateCalls).toHaveLength(1);
  });

  it("stops retrying a provider outage at the run's time budget", async () => {
    // A 5 s retry-after does not fit in the 1 s budget, so no retry wait starts: a wait would
    // have counted a retry (onRetry runs before it), and retries stays 0 below.
    const model = scriptedModel([() => Promise.reject(apiError(503, { "retry-after": "5" }))]);
    const result = await runExpert({
      expert: makeExpert({ budget: { timeout_ms: 1000 } }),
      toolPolicy: makePolicy(),
      args: { query: "q" },
      model,
      tools: docs(),
    });
    expect(result.usage.budgetExhausted).toBe("timeout");
    expect(model.doGenerateCalls).toHaveLength(1);
    // The orchestrator learns the provider was failing, not just that time ran out.
    expect(result).toMatchObject({ outcome: "error", error: { kind: "model-provider-failed" }, usage: { retries: 0 } });
    expect(result.text).toContain("HTTP 503");
  });

  it("sends malformed tool arguments back to the model, which can then correct them", async () => {
    const source = docs();
    const model = scriptedModel([
      { calls: [{ name: "docs__search", input: { q: 42 } }] },
      { calls: [{ name: "docs__search", input: { q: "42" } }] },
      { text: "found" },
    ]);
    const result = await runExpert({ expert: makeExpert(), toolPolicy: makePolicy(), args: { query: "q" }, model, tools: source });
    expect(result).toMatchObject({ outcome: "ok", text: "found" });
    expect(source.calls.map((c) => c.args)).toEqual([{ q: "42" }]);
    const firstFeedback = JSON.stringify(model.doGenerateCalls[1]?.prompt.find((m) => m.role === "tool")?.content);
    expect(firstFeedback).toMatch(/input schema/);
    expect(result.steps[0]?.toolCalls[0]).toMatchObject({ status: "error", error: "malformed arguments" });
  });

  it("ends the run with an error after a bounded number of malformed tool calls", async () => {
    const source = docs();
    const model = scriptedModel([{ calls: [{ name: "docs__search", input: "{not json" }] }]);
    const result = await runExpert({ expert: makeExpert({ budget: { max_steps: 10 } }), toolPolicy: makePolicy(), args: { query: "q" }, model, tools: source });
    expect(result.outcome).toBe("error");
    expect(result.error?.kind).toBe("malformed-tool-arguments");
    expect(model.doGenerateCalls).toHaveLength(MAX_MALFORMED_TOOL_INPUTS + 1);
    expect(source.calls).toHaveLength(0);
    expect(result.text).toContain("docs__search");
  });

  it("a downstream tool error goes back to the model as a tool error and the run continues", async () => {
    const source = new FakeToolSource({
      docs: {
        search: { result: { content: [{ type: "text", text: "index offline" }], isError: true } },
        read: { result: () => Promise.reject(new Error("socket hang up")) },
      },
    });
    const model = scriptedModel([{ calls: [{ name: "docs__search" }, { name: "docs__read" }] }, { text: "both tools failed" }]);
    const result = await runExpert({ expert: makeExpert(), toolPolicy: makePolicy(), args: { query: "q" }, model, tools: source });
    expect(result).toMatchObject({ outcome: "ok", text: "both tools failed" });
    const seen = JSON.stringify(model.doGenerateCalls[1]?.prompt.find((m) => m.role === "tool")?.content);
    expect(seen).toContain("docs__search reported an error: index offline");
    expect(seen).toContain("socket hang up");
    expect(result.steps[0]?.toolCalls.map((c) => c.status)).toEqual(["error", "error"]);
  });
});
