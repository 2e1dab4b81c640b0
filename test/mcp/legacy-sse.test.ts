import { env } from "cloudflare:test";
import { askDocsCatalog } from "./expert-test-setup";
import { Client, SSEClientTransport } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { replaceCatalog } from "../../src/catalog/catalog-service";
import { setModelResolverForTests } from "../../src/experts/models/model-resolver-override";
import { scriptedModel } from "../support/workers/scripted-model";
import { selfFetch } from "./mcp-test-client";

const catalog = askDocsCatalog("legacy");

describe("legacy HTTP+SSE (2024-11-05) clients", () => {
  beforeAll(async () => {
    expect((await replaceCatalog(env, catalog, "test")).ok).toBe(true);
    setModelResolverForTests(() => scriptedModel([{ text: "Answer over SSE." }]));
  });
  afterAll(() => setModelResolverForTests(undefined));

  it("lists and calls experts over /s/<skill>/sse", async () => {
    const client = new Client({ name: "legacy-test", version: "0.0.0" });
    await client.connect(new SSEClientTransport(new URL("http://localhost/s/legacy/sse"), { fetch: selfFetch }));
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(["ask_docs"]);
    const result = await client.callTool({ name: "ask_docs", arguments: { query: "hello" } });
    expect(JSON.stringify(result.content)).toContain("Answer over SSE.");
    await client.close();
  });

  it("refuses a POST to an SSE session that is not open", async () => {
    const response = await selfFetch(`http://localhost/sse/message?sessionId=${crypto.randomUUID()}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    expect(response.status).toBe(404);
  });

  it("refuses a message body over 4 MiB with the same 413 JSON-RPC error as /mcp", async () => {
    const body = JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name: "ask_docs", arguments: { query: "x".repeat(5 * 1024 * 1024) } },
    });
    const response = await selfFetch(`http://localhost/sse/message?sessionId=${crypto.randomUUID()}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body,
    });
    expect(response.status).toBe(413);
    expect(await response.json()).toEqual({
      jsonrpc: "2.0",
      error: { code: -32000, message: "Payload Too Large: Request body must not exceed 4194304 bytes" },
      id: null,
    });
  });
});
