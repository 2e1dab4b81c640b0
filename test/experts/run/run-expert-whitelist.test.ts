import { describe, expect, it } from "vitest";
import type { StepProgress } from "../../../src/experts/core/run-types";
import { runExpert } from "../../../src/experts/run/run-expert";
import { makeExpert, makePolicy } from "../../support/expert-fixture";
import { FakeToolSource, textResult } from "../../support/fake-tool-source";
import { scriptedModel } from "../../support/workers/scripted-model";

const servers = () =>
  new FakeToolSource({
    docs: { search: { result: textResult("found it") }, read: {}, delete_all: {} },
    admin: { wipe: {} },
  });

describe("runExpert tool whitelist", () => {
  it("refuses a non-whitelisted real tool and a hallucinated one without executing them", async () => {
    const source = servers();
    const model = scriptedModel([
      { calls: [{ name: "docs__delete_all" }, { name: "admin__wipe" }, { name: "web__browse", input: { url: "x" } }, { name: "docs__search" }] },
      { text: "searched only" },
    ]);
    const result = await runExpert({ expert: makeExpert(), toolPolicy: makePolicy(), args: { query: "q" }, model, tools: source });

    expect(result.outcome).toBe("ok");
    expect(source.calls.map((c) => `${c.serverId}/${c.toolName}`)).toEqual(["docs/search"]);
    expect(result.usage.toolCalls).toBe(1);
    expect(result.usage.refusedToolCalls).toBe(3);
    expect(result.steps[0]?.toolCalls.map((c) => [c.name, c.status])).toEqual([
      ["docs__delete_all", "refused"],
      ["admin__wipe", "refused"],
      ["web__browse", "refused"],
      ["docs__search", "ok"],
    ]);
    // The model is told, in the tool results of the next step, that those tools are not available.
    const toolMessage = model.doGenerateCalls[1]?.prompt.find((m) => m.role === "tool");
    const outputs = JSON.stringify(toolMessage?.content);
    expect(outputs).toMatch(/unavailable tool 'docs__delete_all'/);
    expect(outputs).toMatch(/unavailable tool 'web__browse'/);
    expect(model.doGenerateCalls[0]?.tools?.map((t) => t.name).sort()).toEqual(["docs__read", "docs__search"]);
  });

  it("reports refused calls as refused in progress, never as calling", async () => {
    const progress: StepProgress[] = [];
    const model = scriptedModel([{ calls: [{ name: "docs__lookup" }] }, { calls: [{ name: "docs__search" }, { name: "docs__delete_all" }] }, { text: "done" }]);
    await runExpert({
      expert: makeExpert({ budget: { max_steps: 5 } }),
      toolPolicy: makePolicy(),
      args: { query: "q" },
      model,
      tools: servers(),
      onStep: (p) => progress.push(p),
    });
    expect(progress.map((p) => p.message)).toEqual([
      "refused docs__lookup (not available to this expert)",
      "calling docs__search; refused docs__delete_all (not available to this expert)",
      "writing the answer",
    ]);
  });

  it("lets the skill's blocked pattern win over the expert's whitelist", async () => {
    const source = servers();
    const model = scriptedModel([{ calls: [{ name: "docs__read" }, { name: "docs__search" }] }, { text: "done" }]);
    const result = await runExpert({
      expert: makeExpert(),
      toolPolicy: makePolicy({ allowed: ["docs__*"], blocked: ["*__read"] }),
      args: { query: "q" },
      model,
      tools: source,
    });
    expect(model.doGenerateCalls[0]?.tools?.map((t) => t.name)).toEqual(["docs__search"]);
    expect(source.calls.map((c) => c.toolName)).toEqual(["search"]);
    expect(result.steps[0]?.toolCalls.map((c) => c.status)).toEqual(["refused", "ok"]);
    expect(result.notes).toContain("docs__read is blocked by the skill's tool policy");
  });

  it("leaves out a whitelisted tool the server does not list, and notes it", async () => {
    const model = scriptedModel([{ text: "nothing to do" }]);
    const result = await runExpert({
      expert: makeExpert({ internal_tools: { docs: ["search", "summarize"] } }),
      toolPolicy: makePolicy(),
      args: { query: "q" },
      model,
      tools: servers(),
    });
    expect(model.doGenerateCalls[0]?.tools?.map((t) => t.name)).toEqual(["docs__search"]);
    expect(result.notes).toContain('docs__summarize is whitelisted but "docs" does not list it');
  });

  it("drops the tools of a server whose listTools fails and still runs on the others", async () => {
    const source = new FakeToolSource({ docs: { search: {} } }, { admin: new Error("connection refused") });
    const model = scriptedModel([{ calls: [{ name: "docs__search" }, { name: "admin__wipe" }] }, { text: "partial answer" }]);
    const result = await runExpert({
      expert: makeExpert({ internal_tools: { docs: ["search"], admin: ["wipe"] } }),
      toolPolicy: makePolicy(),
      args: { query: "q" },
      model,
      tools: source,
    });
    expect(result.outcome).toBe("ok");
    expect(model.doGenerateCalls[0]?.tools?.map((t) => t.name)).toEqual(["docs__search"]);
    expect(source.calls.map((c) => c.toolName)).toEqual(["search"]);
    expect(result.text).toContain("partial answer");
    expect(result.text).toContain('server "admin" was unavailable');
  });

  it("is an error naming the servers when every server of the expert fails to list", async () => {
    const source = new FakeToolSource({}, { docs: new Error("ECONNREFUSED 127.0.0.1:9"), admin: new Error("timed out") });
    const model = scriptedModel([{ text: "should not be called" }]);
    const result = await runExpert({
      expert: makeExpert({ internal_tools: { docs: ["search"], admin: ["wipe"] } }),
      toolPolicy: makePolicy(),
      args: { query: "q" },
      model,
      tools: source,
    });
    expect(result.outcome).toBe("error");
    expect(result.error?.kind).toBe("expert-tools-unavailable");
    expect(result.text).toContain('"docs"');
    expect(result.text).toContain('"admin"');
    expect(result.text).toContain('Expert "research"');
    expect(model.doGenerateCalls).toHaveLength(0);
    expect(result.messages).toEqual([]);
  });

  it("exposes MCP tool names with dots under provider-safe names and still calls the right tool", async () => {
    const source = new FakeToolSource({ docs: { "pages.get": { result: textResult("page") } } });
    const model = scriptedModel([{ calls: [{ name: "docs__pages_get" }] }, { text: "got the page" }]);
    const result = await runExpert({
      expert: makeExpert({ internal_tools: { docs: ["pages.get"] } }),
      toolPolicy: makePolicy(),
      args: { query: "q" },
      model,
      tools: source,
    });
    expect(model.doGenerateCalls[0]?.tools?.map((t) => t.name)).toEqual(["docs__pages_get"]);
    expect(source.calls.map((c) => c.toolName)).toEqual(["pages.get"]);
    expect(result.outcome).toBe("ok");
  });
});
