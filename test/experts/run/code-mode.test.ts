import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { ExpertRunInput, ExpertRunResult, SandboxLoader } from "../../../src/experts/core/run-types";
import { runExpert } from "../../../src/experts/run/run-expert";
import { makeExpert, makePolicy } from "../../support/expert-fixture";
import { FakeToolSource, textResult } from "../../support/fake-tool-source";
import { scriptedModel } from "../../support/workers/scripted-model";

const searchSchema: { type: "object"; [key: string]: unknown } = {
  type: "object",
  properties: { q: { type: "string", description: "what to look for" } },
  required: ["q"],
};
const readSchema: { type: "object"; [key: string]: unknown } = { type: "object", properties: { id: { type: "string" } }, required: ["id"] };

function docs() {
  return new FakeToolSource({
    docs: {
      search: {
        description: "Finds documents",
        inputSchema: searchSchema,
        result: (args) => textResult(JSON.stringify({ hits: [{ id: `doc-${String(args.q)}` }] })),
      },
      read: { inputSchema: readSchema, result: (args) => textResult(`${String(args.id)}: ${"x".repeat(5_000)} the answer is 42`) },
    },
  });
}

const script = (code: string) => ({ calls: [{ name: "run_script", input: { code } }] });

const loader: SandboxLoader = env.LOADER;

function codeRun(model: ExpertRunInput["model"], tools: ExpertRunInput["tools"]): Promise<ExpertRunResult> {
  return runExpert({ expert: makeExpert({ mode: "code" }), toolPolicy: makePolicy(), args: { query: "what is the answer?" }, loader, model, tools });
}

describe("code mode", () => {
  it("runs the model's script over the whitelisted tools and gives the model only what the script returns", async () => {
    const source = docs();
    const chain = `const found = JSON.parse(await tools.docs__search({ q: "answer" }));
const text = await tools.docs__read({ id: found.hits[0].id });
return text.match(/the answer is \\d+/)[0];`;
    const model = scriptedModel([script(chain), { text: "It is 42." }]);
    const result = await codeRun(model, source);

    expect(result.outcome).toBe("ok");
    expect(result.text).toBe("It is 42.");
    expect(source.calls.map((call) => [call.toolName, call.args])).toEqual([
      ["search", { q: "answer" }],
      ["read", { id: "doc-answer" }],
    ]);
    // The model is offered one tool, whose description declares the expert's tools from their schemas.
    const offered = model.doGenerateCalls[0]?.tools ?? [];
    expect(offered.map((tool) => tool.name)).toEqual(["run_script"]);
    const declared = JSON.stringify(model.doGenerateCalls[0]?.prompt);
    expect(declared).toContain("docs__search(input: {");
    expect(declared).toContain("q: string; // what to look for");
    expect(declared).toContain("/** Finds documents */");
    // Only the script's result reaches the model, not the 5 KB document.
    const back = JSON.stringify(model.doGenerateCalls[1]?.prompt.filter((message) => message.role === "tool"));
    expect(back).toContain("the answer is 42");
    expect(back).not.toContain("xxxxxxxxxx");
    // The step lists the script, then the calls it made, as the tool loop's calls are listed.
    expect(result.steps[0]?.toolCalls.map((call) => [call.name, call.status])).toEqual([
      ["run_script", "ok"],
      ["docs__search", "ok"],
      ["docs__read", "ok"],
    ]);
    expect(result.steps[0]?.toolCalls[0]?.args).toContain("tools.docs__search");
    expect(result.usage.toolCalls).toBe(2);
  });

  it("returns a script's error with its line to the model, which can write another script", async () => {
    const model = scriptedModel([script(`const a = 1;\nnull.boom;\nreturn a;`), script(`return "fixed";`), { text: "done" }]);
    const result = await codeRun(model, docs());
    const back = JSON.stringify(model.doGenerateCalls[1]?.prompt.filter((message) => message.role === "tool"));
    expect(back).toMatch(/The script failed at line 2: TypeError/);
    expect(result.steps[0]?.toolCalls[0]).toMatchObject({ name: "run_script", status: "error", error: expect.stringMatching(/^line 2: TypeError/) });
    expect(result.steps[1]?.toolCalls[0]).toMatchObject({ name: "run_script", status: "ok", result: "fixed" });
    expect(result.text).toBe("done");
  });

  it("puts a call needing approval to the user inside the script, and refuses it when nobody can be asked", async () => {
    const call = 'return await tools.docs__search({ q: "a" });';
    const policy = makePolicy({ requires_approval: ["docs__search"] });
    const asked: string[] = [];
    const approvedSource = docs();
    const approved = await runExpert({
      expert: makeExpert({ mode: "code" }),
      toolPolicy: policy,
      args: { query: "q" },
      loader,
      model: scriptedModel([script(call), { text: "done" }]),
      tools: approvedSource,
      askUser: async (prompt) => {
        asked.push(prompt.kind === "approval" ? prompt.tool : prompt.kind);
        return { action: "accept", approve: true };
      },
    });
    expect(asked).toEqual(["search"]);
    expect(approvedSource.calls).toHaveLength(1);
    expect(approved.steps[0]?.toolCalls[1]).toMatchObject({ name: "docs__search", status: "ok", decision: { outcome: "approved", by: "user" } });

    const refusedSource = docs();
    const refused = await runExpert({
      expert: makeExpert({ mode: "code" }),
      toolPolicy: policy,
      args: { query: "q" },
      loader,
      model: scriptedModel([script(call), { text: "done" }]),
      tools: refusedSource,
    });
    expect(refusedSource.calls).toEqual([]);
    expect(refused.steps[0]?.toolCalls.map((c) => [c.name, c.status])).toEqual([
      ["run_script", "error"],
      ["docs__search", "declined"],
    ]);
  });

  it("ends with a clear error, and no model call, on a Worker without the loader binding", async () => {
    const model = scriptedModel([{ text: "never" }]);
    const result = await runExpert({ expert: makeExpert({ mode: "code" }), toolPolicy: makePolicy(), args: { query: "q" }, model, tools: docs() });
    expect(result.outcome).toBe("error");
    expect(result.error?.kind).toBe("code-mode-unavailable");
    expect(result.text).toContain('binding = "LOADER"');
    expect(model.doGenerateCalls).toHaveLength(0);
  });
});
