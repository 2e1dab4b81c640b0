import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { ExpertRunResult, SandboxLoader } from "../../../src/experts/core/run-types";
import { runExpert } from "../../../src/experts/run/run-expert";
import { ToolBridge } from "../../../src/experts/sandbox/tool-bridge";
import type { Budget } from "../../../src/catalog/catalog-schema";
import { makeExpert, makePolicy } from "../../support/expert-fixture";
import { FakeToolSource, textResult, wait } from "../../support/fake-tool-source";
import { scriptedModel } from "../../support/workers/scripted-model";

const loader: SandboxLoader = env.LOADER;

function servers() {
  return new FakeToolSource({
    docs: { search: { result: textResult("hit") }, slow: { result: async (_args, signal) => wait(10_000, signal).then(() => textResult("late")) } },
    admin: { wipe: { result: textResult("wiped") } },
  });
}

/** One code-mode run whose model writes `code`, then answers; the run's record and what the model read back. */
async function hostile(code: string, options: { budget?: Partial<Budget>; source?: FakeToolSource; signal?: AbortSignal } = {}) {
  const source = options.source ?? servers();
  const model = scriptedModel([{ calls: [{ name: "run_script", input: { code } }] }, { text: "answered" }]);
  const result: ExpertRunResult = await runExpert({
    expert: makeExpert({ mode: "code", internal_tools: { docs: ["search", "slow"] }, budget: options.budget ?? {} }),
    toolPolicy: makePolicy(),
    args: { query: "q" },
    model,
    tools: source,
    loader,
    ...(options.signal ? { signal: options.signal } : {}),
  });
  const readBack = JSON.stringify(model.doGenerateCalls[1]?.prompt.filter((message) => message.role === "tool") ?? []);
  return { result, readBack, source, script: result.steps[0]?.toolCalls[0] };
}

describe("hostile scripts are contained", () => {
  it("fetch has no network (globalOutbound null)", async () => {
    const { readBack, script } = await hostile(`return await fetch("http://127.0.0.1:9/steal");`);
    expect(script).toMatchObject({ name: "run_script", status: "error" });
    expect(readBack).toMatch(/The script failed at line 1: /);
    expect(readBack).not.toContain('steal\\" succeeded');
  });

  it("sees no env, no bindings and not the bridge: only `tools` and `console`", async () => {
    const { script } = await hostile(`return JSON.stringify({
  env: typeof env, self: typeof this, bridge: typeof bridge, process: typeof process,
  globals: ["LOADER", "DB", "CACHE", "OAUTH_KV", "EXPERT_SESSION", "SELF", "AI", "CONNECTIONS_KEY"].filter((k) => k in globalThis),
});`);
    expect(script?.status).toBe("ok");
    expect(JSON.parse(script?.result ?? "{}")).toMatchObject({ env: "undefined", self: "undefined", bridge: "undefined", globals: [] });
  });

  it("a tool outside the whitelist is refused and never reaches its server", async () => {
    const { result, source, readBack } = await hostile(`return await tools.admin__wipe({});`);
    expect(source.calls).toEqual([]);
    expect(readBack).toContain("unavailable tool 'admin__wipe'");
    expect(result.steps[0]?.toolCalls.map((call) => [call.name, call.status])).toEqual([
      ["run_script", "error"],
      ["admin__wipe", "refused"],
    ]);
    expect(result.usage.refusedToolCalls).toBe(1);
  });

  it("the tool-call budget holds inside a script's loop, and the run ends as the tool loop's does", async () => {
    const code = `const out = [];
for (let i = 0; i < 10; i++) out.push(await tools.docs__search({ q: String(i) }).catch((e) => e.message));
return out;`;
    const { source, result, script } = await hostile(code, { budget: { max_tool_calls: 3 } });
    expect(source.calls).toHaveLength(3);
    expect(script?.result).toContain("exceeds this run's budget of 3 tool calls");
    expect(result.usage.toolCalls).toBe(3);
    expect(result).toMatchObject({ outcome: "budget_exhausted", usage: { budgetExhausted: "tool_calls" } });
  });

  it("deep recursion ends the script with its error, and the run goes on", async () => {
    const { result, readBack } = await hostile(`const down = (n) => down(n + 1) + 1;\nreturn down(0);`);
    expect(readBack).toMatch(/The script failed at line \d: RangeError: Maximum call stack size exceeded/);
    expect(result.text).toBe("answered");
  });

  it("keeps no state between scripts: each runs in a fresh isolate", async () => {
    await hostile(`globalThis.stolen = "secret of run one"; return "kept";`);
    const { script } = await hostile(`return String(globalThis.stolen);`);
    expect(script?.result).toBe("undefined");
  });

  it("the bridge takes only a tool name and JSON text, carries no identity, and refuses calls once its script ended", async () => {
    const seen: Array<[string, unknown]> = [];
    const gate = { open: true };
    const bridge = new ToolBridge(async (name, input) => {
      seen.push([name, input]);
      return "ok";
    }, gate);
    expect(JSON.parse(await bridge.call({ user: "someone-else" }, "{}"))).toMatchObject({ ok: false });
    expect(JSON.parse(await bridge.call("docs__search", { q: 1 }))).toMatchObject({ ok: false });
    expect(JSON.parse(await bridge.call("docs__search", "{not json"))).toMatchObject({ ok: false, error: expect.stringContaining("not JSON") });
    expect(JSON.parse(await bridge.call("docs__search", '{"q":"x"}'))).toEqual({ ok: true, result: "ok" });
    gate.open = false;
    expect(JSON.parse(await bridge.call("docs__search", '{"q":"late"}'))).toMatchObject({ ok: false, error: expect.stringContaining("script has ended") });
    expect(seen).toEqual([["docs__search", { q: "x" }]]);
  });

  it("cannot reach past `tools`: a proxy without a prototype, whose every name is a tool call", async () => {
    const { source, script } = await hostile(`const p = Object.getPrototypeOf(tools);
return JSON.stringify({ proto: p === null, ctor: typeof tools.constructor, keys: Object.keys(tools) });`);
    // `tools` is a proxy with no prototype: every property is a tool call, and `constructor` is one too.
    expect(JSON.parse(script?.result ?? "{}")).toMatchObject({ proto: true, ctor: "function", keys: [] });
    expect(source.calls).toEqual([]);
  });

  it("the run's deadline ends a script waiting on a tool; the run ends at its clock, not the tool's", async () => {
    const started = Date.now();
    const { result } = await hostile(`return await tools.docs__slow({});`, { budget: { timeout_ms: 1_000 } });
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(result.outcome).toBe("budget_exhausted");
    expect(result.usage.budgetExhausted).toBe("timeout");
  });

  it("a cancel ends a running script", async () => {
    const controller = new AbortController();
    const source = servers();
    const running = hostile(`return await tools.docs__slow({});`, { source, signal: controller.signal });
    const deadline = Date.now() + 5_000;
    while (source.calls.length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    controller.abort();
    const { result } = await running;
    expect(result.outcome).toBe("cancelled");
  });
});
