import { env, runInDurableObject } from "cloudflare:test";
import { Client, SSEClientTransport } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sessionStub } from "../../../src/experts/session/session-name";
import { useCatalogWithScriptedModels } from "../../support/workers/scripted-model";
import { admin } from "../../admin/admin-test-client";
import { askDocsCatalog, textOf } from "../expert-test-setup";
import { type Era, connectClient, selfFetch } from "../mcp-test-client";

const SKILL = "default";
const LIMIT_TEXT = "more than 64 levels deep; the limit is 64";

/** ask_docs with a `filter` argument of any shape, so only the nesting can refuse it. */
function catalog() {
  const value = askDocsCatalog(SKILL);
  const expert = value.skills[SKILL]?.experts[0];
  if (!expert) throw new Error("askDocsCatalog changed shape");
  (expert.arguments.properties as Record<string, unknown>).filter = {};
  return value;
}

/** JSON text of arrays nested `depth` levels: 10,000 levels are 20 KB, far under the input limits. */
function nestedText(depth: number): string {
  return "[".repeat(depth) + "]".repeat(depth);
}

/** The value itself (V8's JSON.parse does not recurse; JSON.stringify does, past about 5,000 levels). */
function nested(depth: number): unknown {
  return JSON.parse(nestedText(depth));
}

async function sessionRuns(): Promise<number> {
  return runInDurableObject(
    sessionStub(env, SKILL, "local:dev"),
    (_instance, state) => state.storage.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM runs").one().n,
  );
}

function rawToolCall(path: string, id: number, filterText: string): Promise<Response> {
  return selfFetch(`http://localhost${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-11-25" },
    body: `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"ask_docs","arguments":{"query":"q","filter":${filterText}}}}`,
  });
}

describe("JSON nested deeper than 64 levels is refused before anything runs", () => {
  const models = useCatalogWithScriptedModels(catalog());

  for (const path of ["/mcp", "/s/default/mcp"]) {
    it(`${path}: 10,000 levels (20 KB) are a -32602 for the same request id, no 500, no run`, async () => {
      const before = await sessionRuns();
      const model = models.play([{ text: "must not run" }]);
      const response = await rawToolCall(path, 7, nestedText(10_000));
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({
        jsonrpc: "2.0",
        id: 7,
        error: { code: -32602, message: expect.stringContaining(LIMIT_TEXT) },
      });
      expect(model.doGenerateCalls).toHaveLength(0);
      expect(await sessionRuns()).toBe(before);
    });
  }

  for (const era of ["2025", "2026"] satisfies Era[]) {
    it(`an SDK client (${era} era) gets the error for its call; 60 levels still run`, async () => {
      const client = await connectClient("/s/default/mcp", era);
      try {
        const model = models.play([{ text: "must not run" }]);
        await expect(client.callTool({ name: "ask_docs", arguments: { query: "q", filter: nested(1_000) } })).rejects.toThrow(LIMIT_TEXT);
        expect(model.doGenerateCalls).toHaveLength(0);
        models.play([{ text: "Flat enough." }]);
        const ok = await client.callTool({ name: "ask_docs", arguments: { query: "q", filter: nested(60) } });
        expect(textOf(ok)).toContain("Flat enough.");
      } finally {
        await client.close();
      }
    });
  }

  it("a deep body without an id (a batch, a notification) is a 400 -32600 with id null", async () => {
    const response = await selfFetch("http://localhost/mcp", {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: nestedText(10_000),
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ jsonrpc: "2.0", id: null, error: { code: -32600, message: expect.stringContaining(LIMIT_TEXT) } });
  });

  it("legacy /sse/message: the deep call fails at once with the reason, not a 500", async () => {
    const client = new Client({ name: "legacy-deep", version: "0.0.0" });
    await client.connect(new SSEClientTransport(new URL("http://localhost/sse"), { fetch: selfFetch }));
    try {
      const model = models.play([{ text: "must not run" }]);
      await expect(client.callTool({ name: "ask_docs", arguments: { query: "q", filter: nested(1_000) } })).rejects.toThrow(LIMIT_TEXT);
      expect(model.doGenerateCalls).toHaveLength(0);
      models.play([{ text: "Still connected." }]);
      expect(textOf(await client.callTool({ name: "ask_docs", arguments: { query: "q" } }))).toContain("Still connected.");
    } finally {
      await client.close();
    }
  });

  it("the admin API refuses a deep body with a 400 naming the limit, and saves nothing", async () => {
    const body = `{"description":"x","experts":[{"name":"deep","arguments":${nestedText(10_000)}}]}`;
    const answer = await admin("PUT", "/skills/deep-json", body);
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ error: expect.stringContaining(LIMIT_TEXT), fix: expect.stringContaining("flatter") });
    expect((await admin("GET", "/skills/deep-json")).status).toBe(404);
    const push = await admin("PUT", "/catalog", `{"skills":{"default":${nestedText(10_000)}}}`);
    expect(push.status).toBe(400);
  });
});

describe("the nesting bound leaves ordinary catalogs alone", () => {
  beforeAll(async () => {
    expect((await admin("PUT", "/skills/nested-ok", { description: "x", experts: [] })).status).toBe(201);
  });
  afterAll(async () => {
    await admin("DELETE", "/skills/nested-ok");
  });
  it("reads brackets inside strings as text", async () => {
    const answer = await admin("PUT", "/skills/nested-ok", { description: `${"[{".repeat(200)} \\" ${"}]".repeat(200)}`, experts: [] });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  });
});

describe("requests the SDK answered badly are client errors with a short message", () => {
  useCatalogWithScriptedModels(askDocsCatalog("default"));

  async function post(path: string, body: unknown): Promise<{ status: number; body: unknown }> {
    const response = await selfFetch(`http://localhost${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-11-25" },
      body: JSON.stringify(body),
    });
    return { status: response.status, body: await response.json() };
  }

  it("resources/read with a URI over 1 MB: -32602 naming the limit, not a 500", async () => {
    const uri = `slipsnisse://runs/${"a".repeat(1_100_000)}`;
    for (const path of ["/mcp", "/s/default/mcp"]) {
      const answer = await post(path, { jsonrpc: "2.0", id: 4, method: "resources/read", params: { uri } });
      expect(answer).toEqual({
        status: 200,
        body: { jsonrpc: "2.0", id: 4, error: { code: -32602, message: `resources/read: params.uri is ${uri.length} characters, over the limit of 8192.` } },
      });
    }
  });

  it("a URI under the limit is still an ordinary not found", async () => {
    const client = await connectClient("/mcp", "2026");
    try {
      await expect(client.readResource({ uri: `slipsnisse://runs/${"a".repeat(8_000)}` })).rejects.toThrow(/not found/i);
    } finally {
      await client.close();
    }
  });

  it("initialize with a protocolVersion that is not a string: -32602 in one line, no schema dump", async () => {
    for (const [protocolVersion, type] of [
      [20250618, "a number"],
      [{ v: 1 }, "an object"],
      [null, "null"],
    ] as const) {
      const answer = await post("/mcp", {
        jsonrpc: "2.0",
        id: 5,
        method: "initialize",
        params: { protocolVersion, capabilities: {}, clientInfo: { name: "x", version: "1" } },
      });
      expect(answer).toEqual({
        status: 200,
        body: {
          jsonrpc: "2.0",
          id: 5,
          error: { code: -32602, message: `initialize: params.protocolVersion must be a string such as "2025-11-25", not ${type}.` },
        },
      });
    }
  });
});
