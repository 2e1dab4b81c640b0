import { env } from "cloudflare:test";
import { askDocsCatalog } from "../expert-test-setup";
import { Client, SSEClientTransport } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { replaceCatalog } from "../../../src/catalog/catalog-service";
import { setModelResolverForTests } from "../../../src/experts/models/model-resolver-override";
import { scriptedModel } from "../../support/workers/scripted-model";
import { waitFor } from "../../support/wait-for";
import { selfFetch } from "../mcp-test-client";

const catalog = askDocsCatalog("legacy");

describe("legacy HTTP+SSE (2024-11-05) clients", () => {
  beforeAll(async () => {
    expect((await replaceCatalog(env, catalog, "test")).ok).toBe(true);
    setModelResolverForTests(() => scriptedModel([{ text: "Answer over SSE." }]));
  });
  afterAll(() => setModelResolverForTests(undefined));

  it("lists and calls experts over /s/<skill>/sse; the call's new run is announced with resources/list_changed", async () => {
    const client = new Client({ name: "legacy-test", version: "0.0.0" });
    let runsChanged = 0;
    client.setNotificationHandler("notifications/resources/list_changed", () => {
      runsChanged++;
    });
    await client.connect(new SSEClientTransport(new URL("http://localhost/s/legacy/sse"), { fetch: selfFetch }));
    expect(client.getServerCapabilities()?.resources?.listChanged).toBe(true);
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(["ask_docs"]);
    const result = await client.callTool({ name: "ask_docs", arguments: { query: "hello" } });
    expect(JSON.stringify(result.content)).toContain("Answer over SSE.");
    await waitFor("resources/list_changed", () => (runsChanged > 0 ? true : undefined), 5_000, 20);
    const { resources } = await client.listResources();
    const runId = String(result._meta?.["slipsnisse.dev/run"]);
    expect(resources.map((resource) => resource.uri)).toContain(`slipsnisse://runs/${runId}`);
    await client.close();
  });

  it("an open connection hears tools/list_changed when the skill's experts change, and lists the new ones", async () => {
    const client = new Client({ name: "legacy-list-changed", version: "0.0.0" });
    let changed = 0;
    client.setNotificationHandler("notifications/tools/list_changed", () => {
      changed++;
    });
    await client.connect(new SSEClientTransport(new URL("http://localhost/s/legacy/sse"), { fetch: selfFetch }));
    try {
      expect(client.getServerCapabilities()?.tools?.listChanged).toBe(true);
      expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(["ask_docs"]);
      const base = catalog.skills.legacy;
      const askDocs = base?.experts[0];
      const next = { skills: { legacy: { ...base, experts: [askDocs, { ...askDocs, name: "ask_more" }] } } };
      expect((await replaceCatalog(env, next, "test")).ok).toBe(true);
      // The session reads the skill's version before each client message (and at each keep-alive).
      await waitFor(
        "tools/list_changed",
        async () => {
          await client.ping();
          return changed > 0 ? true : undefined;
        },
        10_000,
        200,
      );
      expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(["ask_docs", "ask_more"]);
    } finally {
      await client.close();
      expect((await replaceCatalog(env, catalog, "test")).ok).toBe(true);
    }
  }, 20_000);

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
