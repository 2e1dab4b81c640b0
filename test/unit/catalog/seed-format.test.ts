import { describe, expect, it } from "vitest";
import { DEFAULT_SKILL } from "../../../src/catalog/catalog-schema";
import { parseCatalog } from "../../../src/catalog/parse-catalog";
import { problemAt, problemsOf } from "./catalog-fixtures";

const seed = () => ({
  mcps: { docs: { url: "https://docs.example.com/mcp", transport: "sse", headers: { Authorization: "Bearer ${DOCS_TOKEN}" } } },
  tools: [
    {
      name: "research_dependency",
      description: "Finds libraries.",
      arguments: { type: "object", properties: { query: { type: "string" } }, required: ["query"] },
      internal_tools: { docs: ["search"] },
      provider: "google",
      model: "gemini-2.5-flash",
      system_prompt: "Be brief.",
    },
  ],
});

describe("the Slipsnisse seed format", () => {
  it("is accepted as a catalog with a single `default` skill", () => {
    const result = parseCatalog(seed());
    if (!result.ok) throw new Error(JSON.stringify(result.problems));
    expect(Object.keys(result.catalog.skills)).toEqual([DEFAULT_SKILL]);
    const skill = result.catalog.skills[DEFAULT_SKILL];
    expect(skill?.servers.docs?.transport).toBe("sse");
    expect(skill?.experts[0]).toMatchObject({ name: "research_dependency", provider: "google", system_prompt: "Be brief." });
  });

  it("reports problems at their paths in the original document", () => {
    const input = seed();
    const tools: Record<string, unknown>[] = [
      ...input.tools,
      { ...input.tools[0], name: "bad name" },
      { ...input.tools[0], name: "x", internal_tools: { fs: ["read"] } },
    ];
    const document = {
      mcps: { ...input.mcps, fs: { command: "npx", args: ["-y", "@modelcontextprotocol/server-filesystem", "/src"] } },
      tools,
      verbose: true,
    };
    const problems = problemsOf(document);
    expect(problemAt(problems, "$.mcps.fs.command").fix).toContain("supergateway");
    expect(problemAt(problems, "$.tools[1].name").fix).toBe("rename it to `bad_name`");
    expect(problemAt(problems, "$.verbose").fix).toContain("mcps, tools");
    expect(problems.every((p) => !p.path.startsWith("$.skills"))).toBe(true);
    expect(problems.map((p) => p.path)).not.toContain("$.mcps.fs.args");
  });

  it("speaks of `mcps` when an internal_tools server is undefined", () => {
    const input = seed();
    const tool = input.tools[0];
    if (!tool) throw new Error("fixture");
    tool.internal_tools = { rust_docs: ["search"] } as unknown as typeof tool.internal_tools;
    const problem = problemAt(problemsOf(input), "$.tools[0].internal_tools.rust_docs");
    expect(problem.fix).toContain("`mcps`");
    expect(problem.fix).toContain("`docs`");
  });

  it("maps a wrong container type to the seed key", () => {
    expect(problemAt(problemsOf({ mcps: [], tools: [] }), "$.mcps").message).toBe("expected an object, got an array");
  });
});
