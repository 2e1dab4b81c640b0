import type { Client } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { META_OUTCOME, META_THREAD } from "../../../src/mcp/delivery/expert-tool-result";
import type { MockLanguageModelV4 } from "ai/test";
import { DEMO_DOCS_SERVER } from "../expert-test-setup";
import { useCatalogWithScriptedModels } from "../../support/workers/scripted-model";
import { connectClient, type Era } from "../mcp-test-client";

const outputSchema = {
  type: "object",
  properties: { answer: { type: "string" }, sources: { type: "array", items: { type: "string" } } },
  required: ["answer", "sources"],
};
const base = {
  arguments: { type: "object", properties: { query: { type: "string" } }, required: ["query"] },
  internal_tools: { docs: ["search_docs"] },
  provider: "openai-compatible",
  base_url: "http://127.0.0.1:9/v1",
  model: "never-called",
};
// The demo docs server through the Worker's own service binding: a real downstream MCP call.
const catalog = {
  skills: {
    default: {
      servers: { docs: DEMO_DOCS_SERVER },
      experts: [
        { ...base, name: "docs_facts", description: "Answers with structured facts.", output_schema: outputSchema },
        { ...base, name: "docs_route", description: "Routes a query to one docs tool.", mode: "route" },
      ],
    },
  },
};

function textBlocks(result: { content?: unknown }): string[] {
  return ((result.content ?? []) as Array<{ type: string; text?: string }>).map((block) => block.text ?? "");
}

describe("structured and route experts over MCP", () => {
  const models = useCatalogWithScriptedModels(catalog);
  let model: MockLanguageModelV4;

  for (const era of ["2025", "2026"] as const satisfies readonly Era[]) {
    describe(`${era} client`, () => {
      let client: Client;
      beforeAll(async () => {
        client = await connectClient("/mcp", era);
      });
      afterAll(async () => client.close());

      it("advertises output_schema as the tool's outputSchema, and only for that expert", async () => {
        const { tools } = await client.listTools();
        const byName = Object.fromEntries(tools.map((tool) => [tool.name, tool]));
        expect(byName.docs_facts?.outputSchema).toMatchObject({ type: "object", required: ["answer", "sources"] });
        expect(byName.docs_route?.outputSchema).toBeUndefined();
      });

      it("returns a matching answer as structuredContent, with its JSON as text", async () => {
        const answer = { answer: "Budgets bound every loop.", sources: ["readme#budgets"] };
        model = models.play([{ calls: [{ name: "docs__search_docs", input: { query: "budget" } }] }, { text: JSON.stringify(answer) }]);
        const result = await client.callTool({ name: "docs_facts", arguments: { query: "What bounds a run?" } });
        expect(result.isError).toBeFalsy();
        expect(result.structuredContent).toEqual(answer);
        const [json, trailer] = textBlocks(result);
        expect(JSON.parse(json ?? "")).toEqual(answer);
        expect(trailer).toContain(String(result._meta?.[META_THREAD]));
      });

      it("returns a tool error naming the problem when the answer does not match", async () => {
        model = models.play([{ text: '{"answer": "no sources"}' }]);
        const result = await client.callTool({ name: "docs_facts", arguments: { query: "q" } });
        expect(result.isError).toBe(true);
        expect(result.structuredContent).toBeUndefined();
        const text = textBlocks(result).join("");
        expect(text).toContain('Expert "docs_facts" returned no structured result: the final answer does not match output_schema (#: ');
        expect(text).toContain('"sources"');
      });

      it("routes to one real downstream call and returns its result as is, with one model call", async () => {
        model = models.play([{ calls: [{ name: "docs__search_docs", input: { query: "budget exhausted" } }] }, { text: "must not be called" }]);
        const result = await client.callTool({ name: "docs_route", arguments: { query: "budget exhausted" } });
        expect(result.isError).toBeFalsy();
        expect(model.doGenerateCalls).toHaveLength(1);
        expect(result._meta?.[META_OUTCOME]).toBe("ok");
        // The demo docs server's own result text (its section paths), not anything the model wrote.
        expect(textBlocks(result).join("")).toMatch(/\(path: [a-z]+#/);
        expect(textBlocks(result).join("")).not.toContain("must not be called");
      });
    });
  }
});
