import { env } from "cloudflare:test";
import type { Client } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { META_RUN, META_THREAD, META_USAGE } from "../../../src/mcp/delivery/expert-tool-result";
import { sessionStub } from "../../../src/experts/session/session-name";
import type { MockLanguageModelV4 } from "ai/test";
import { askDocsCatalog, textOf } from "../expert-test-setup";
import { useCatalogWithScriptedModels } from "../../support/workers/scripted-model";
import { connectClient, selfFetch, type Era } from "../mcp-test-client";

// The demo docs server, reached through the Worker's own service binding: a real downstream MCP call.
const catalog = askDocsCatalog("default");

describe("expert tools over MCP", () => {
  const models = useCatalogWithScriptedModels(catalog);
  let model: MockLanguageModelV4;

  for (const era of ["2025", "2026"] as const satisfies readonly Era[]) {
    describe(`${era} client`, () => {
      let client: Client;
      beforeAll(async () => {
        client = await connectClient("/mcp", era);
      });
      afterAll(async () => client.close());

      it("lists the skill's experts with their schema and the optional thread handle", async () => {
        const listed = await client.listTools();
        const { tools } = listed;
        expect(tools.map((tool) => tool.name)).toEqual(["ask_docs"]);
        // 2026-07-28 list results say how long to cache them, so clients re-list after a catalog change.
        if (era === "2026") expect(listed).toMatchObject({ ttlMs: 60_000 });
        const schema = tools[0]?.inputSchema as { properties: Record<string, unknown>; required: string[] };
        // `approve` only while the docs server's tools are not known yet (both are read-only once
        // listed; annotations-from-known-tools.test.ts): which, depends on the runs before this one.
        expect(Object.keys(schema.properties).filter((name) => name !== "approve")).toEqual(["query", "thread"]);
        expect(schema.required).toEqual(["query"]);
      });

      it("runs the model loop over the real downstream tool and returns only the final answer", async () => {
        model = models.play([
          { calls: [{ name: "docs__search_docs", input: { query: "budget exhausted" } }] },
          (options) => {
            const prompt = JSON.stringify(options.prompt);
            // The downstream result the model read came from the docs server, not from the test.
            expect(prompt).toContain("budget exhausted");
            expect(prompt).toMatch(/\(path: [a-z]+#/);
            return {
              content: [{ type: "text", text: "Budgets bound every loop." }],
              finishReason: { unified: "stop", raw: "stop" },
              usage: {
                inputTokens: { total: 50, noCache: 50, cacheRead: undefined, cacheWrite: undefined },
                outputTokens: { total: 7, text: 7, reasoning: undefined },
              },
              warnings: [],
            };
          },
        ]);
        const result = await client.callTool({ name: "ask_docs", arguments: { query: "What happens when a budget runs out?" } });
        expect(result.isError).toBeFalsy();
        expect(textOf(result)).toMatch(/^Budgets bound every loop\.\n\n\(thread: th_/);
        expect(textOf(result)).not.toMatch(/\(path: [a-z]+#/);
        const usage = result._meta?.[META_USAGE] as Record<string, unknown>;
        expect(usage).toMatchObject({ steps: 2, toolCalls: 1, refusedToolCalls: 0, budgetExhausted: null });
        expect(usage.downstreamBytesRead as number).toBeGreaterThan(0);
        expect(model.doGenerateCalls[0]?.tools?.map((tool) => tool.name)).toEqual(["docs__search_docs"]);
      });

      it("continues a thread and keeps the earlier turns in the model's context", async () => {
        model = models.play([{ text: "First answer." }]);
        const first = await client.callTool({ name: "ask_docs", arguments: { query: "Remember the word marmalade." } });
        const thread = first._meta?.[META_THREAD] as string;
        expect(thread).toMatch(/^th_/);
        model = models.play([{ text: "Second answer." }]);
        const second = await client.callTool({ name: "ask_docs", arguments: { query: "Which word?", thread } });
        expect(second._meta?.[META_THREAD]).toBe(thread);
        const prompt = JSON.stringify(model.doGenerateCalls[0]?.prompt);
        expect(prompt).toContain("marmalade");
        expect(prompt).toContain("First answer.");
      });

      it("refuses a bad argument with an MCP error naming the field, without running the model", async () => {
        model = models.play([{ text: "must not run" }]);
        const result = await client.callTool({ name: "ask_docs", arguments: { query: 42 } });
        expect(result.isError).toBe(true);
        expect(textOf(result)).toMatch(/query/);
        expect(model.doGenerateCalls).toHaveLength(0);
      });

      it("records the run in the user's session", async () => {
        model = models.play([{ text: "Recorded." }]);
        const result = await client.callTool({ name: "ask_docs", arguments: { query: "anything" } });
        const runId = result._meta?.[META_RUN] as string;
        const stub = sessionStub(env, "default", "local:dev");
        const run = await stub.run(runId);
        expect(run).toMatchObject({ id: runId, expert: "ask_docs", outcome: "ok", userId: "local:dev" });
      });
    });
  }

  it("answers 404 for a skill the catalog does not have", async () => {
    const response = await selfFetch("http://localhost/s/nope/mcp", {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({ error: 'No skill named "nope" in this tenant\'s catalog.' });
  });
});
