import { env } from "cloudflare:test";
import { afterEach, describe, expect, it } from "vitest";
import { DownstreamPool } from "../../src/downstream/downstream-pool";
import { runExpert } from "../../src/experts/run/run-expert";
import { readFixtureStats } from "../fixtures/fixture-stats-client";
import { makeExpert, makePolicy } from "../support/expert-fixture";
import { scriptedModel } from "../support/workers/scripted-model";
import { echoBase, firstText, serverConfig, sseBase, uniqueSkill } from "./downstream-test-helpers";

const CAP = 64 * 1024;

/**
 * A service binding in front of the echo fixture that answers in JSON instead of SSE (the SDK v1
 * fixture streams every answer as SSE): a Streamable HTTP server with `enableJsonResponse`.
 */
function jsonAnsweringBinding(base: string, chunked: boolean): Fetcher {
  const fetcher = {
    fetch: async (input: RequestInfo | URL, init?: RequestInit) => {
      const request = new Request(input, init);
      const response = await fetch(new Request(`${base}${new URL(request.url).pathname}`, request));
      if (!(response.headers.get("content-type") ?? "").startsWith("text/event-stream")) return response;
      const data = /^data: (.*)$/m.exec(await response.text())?.[1] ?? "";
      // A string body has a Content-Length; a stream of chunks has none, so the cap must count as it reads.
      const body = chunked ? chunksOf(data, 16 * 1024) : data;
      return new Response(body, { status: response.status, headers: { "content-type": "application/json" } });
    },
  };
  return fetcher as unknown as Fetcher;
}

function chunksOf(text: string, size: number): ReadableStream<Uint8Array> {
  const bytes = new TextEncoder().encode(text);
  let offset = 0;
  return new ReadableStream({
    pull(controller) {
      if (offset >= bytes.byteLength) return controller.close();
      controller.enqueue(bytes.slice(offset, offset + size));
      offset += size;
    },
  });
}

type Wire = "streamable-http (SSE answers)" | "streamable-http (JSON answers)" | "streamable-http (chunked JSON answers)" | "legacy SSE";

function poolFor(wire: Wire, base: string): DownstreamPool {
  const common = { max_response_bytes: CAP };
  if (wire === "legacy SSE") {
    return new DownstreamPool({ env, skill: uniqueSkill("cap"), servers: { big: serverConfig({ url: `${base}/sse`, transport: "sse", ...common }) } });
  }
  if (wire === "streamable-http (JSON answers)" || wire === "streamable-http (chunked JSON answers)") {
    return new DownstreamPool({
      env: Object.assign({}, env, { JSON_ECHO: jsonAnsweringBinding(base, wire === "streamable-http (chunked JSON answers)") }),
      skill: uniqueSkill("cap"),
      servers: { big: serverConfig({ binding: "JSON_ECHO", url: "https://json-echo.internal/mcp", transport: "streamable-http", ...common }) },
    });
  }
  return new DownstreamPool({
    env,
    skill: uniqueSkill("cap"),
    servers: { big: serverConfig({ url: `${base}/mcp`, transport: "streamable-http", ...common }) },
  });
}

describe("a downstream response larger than the server's max_response_bytes", () => {
  let open: DownstreamPool | undefined;
  afterEach(async () => {
    await open?.close();
    open = undefined;
  });

  for (const wire of ["streamable-http (SSE answers)", "streamable-http (JSON answers)", "streamable-http (chunked JSON answers)", "legacy SSE"] as const) {
    it(`over ${wire}: the expert's tool call fails naming the server and the cap, and the next call works on the same connection`, async () => {
      const base = wire === "legacy SSE" ? sseBase("cap") : echoBase("cap");
      open = poolFor(wire, base);
      const result = await runExpert({
        expert: makeExpert({ internal_tools: { big: ["big", "echo"] } }),
        toolPolicy: makePolicy(),
        args: { query: "q" },
        model: scriptedModel([
          { calls: [{ name: "big__big", input: { bytes: 1_000_000 } }] },
          { calls: [{ name: "big__echo", input: { text: "still here" } }] },
          { text: "done" },
        ]),
        tools: open,
      });
      const [oversized] = result.steps[0]?.toolCalls ?? [];
      expect(oversized).toMatchObject({ name: "big__big", status: "error" });
      expect(oversized?.error).toContain(`Downstream server "big" sent a response larger than its ${CAP}-byte cap (max_response_bytes)`);
      // The session's connection survived: the next call answers, with no new handshake and no backoff.
      expect(result.steps[1]?.toolCalls).toMatchObject([{ name: "big__echo", status: "ok" }]);
      expect(open.states().big).toMatchObject({ status: "ready" });
      const stats = await readFixtureStats(base);
      expect(stats.initialize).toBe(1);
      expect(stats.calls.big).toBe(1);
      expect(result.outcome).toBe("ok");
    });
  }

  it("a response under the cap passes whole, and the default cap is 4 MiB", async () => {
    const base = echoBase("under");
    open = poolFor("streamable-http (SSE answers)", base);
    expect(firstText(await open.callTool("big", "big", { bytes: CAP - 1_024 }))).toHaveLength(CAP - 1_024);
    expect(serverConfig({ url: "https://x.example/mcp" }).max_response_bytes).toBe(4 * 1024 * 1024);
  });
});

describe("a malformed answer to one call", () => {
  let open: DownstreamPool | undefined;
  afterEach(async () => {
    await open?.close();
    open = undefined;
  });

  /**
   * The echo fixture, except that tools/call of `echo` with text "garbage" or "not-jsonrpc" gets that body (HTTP 200,
   * JSON), "…-sse" the same as an SSE answer, and "bad-result" a JSON-RPC result the MCP schema refuses.
   */
  function garblingBinding(base: string, up: { value: boolean }): Fetcher {
    const fetcher = {
      fetch: async (input: RequestInfo | URL, init?: RequestInit) => {
        if (!up.value) throw new TypeError("Network connection lost.");
        const request = new Request(input, init);
        const body = request.method === "POST" ? await request.clone().text() : "";
        if (body.includes('"text":"garbage"')) return new Response('{"jsonrpc":"2.0","id":', { headers: { "content-type": "application/json" } });
        if (body.includes('"text":"not-jsonrpc"')) return new Response('{"hello":"world"}', { headers: { "content-type": "application/json" } });
        const sse = (data: string) => new Response(`event: message\ndata: ${data}\n\n`, { headers: { "content-type": "text/event-stream" } });
        if (body.includes('"text":"garbage-sse"')) return sse('{"jsonrpc":"2.0","id":');
        if (body.includes('"text":"not-jsonrpc-sse"')) return sse('{"hello":"world"}');
        if (body.includes('"text":"bad-result"')) {
          const id: unknown = JSON.parse(body).id;
          return new Response(JSON.stringify({ jsonrpc: "2.0", id, result: { content: "not an array" } }), { headers: { "content-type": "application/json" } });
        }
        return fetch(new Request(`${base}${new URL(request.url).pathname}`, request));
      },
    };
    return fetcher as unknown as Fetcher;
  }

  it("fails that call only, naming the server and what was wrong; the server is not put into backoff, transport failures still are", async () => {
    const base = echoBase("garble");
    const up = { value: true };
    open = new DownstreamPool({
      env: Object.assign({}, env, { GARBLE: garblingBinding(base, up) }),
      skill: uniqueSkill("garble"),
      servers: { garbler: serverConfig({ binding: "GARBLE", url: "https://garble.internal/mcp", transport: "streamable-http" }) },
      backoff: { baseMs: 60_000, maxMs: 60_000, jitter: 0 },
    });
    for (const text of ["garbage", "not-jsonrpc", "bad-result", "garbage-sse", "not-jsonrpc-sse", "garbage", "not-jsonrpc"]) {
      const error = await open.callTool("garbler", "echo", { text }).catch((caught: unknown) => caught);
      expect(error, text).toMatchObject({ serverId: "garbler" });
      expect((error as { kind: string }).kind, text).toMatch(/^downstream-(malformed-response|protocol)$/);
      expect((error as Error).message, text).toContain('Downstream server "garbler"');
      expect(open.states().garbler, text).toMatchObject({ status: "ready" });
    }
    expect(firstText(await open.callTool("garbler", "echo", { text: "fine" }))).toBe("fine");
    expect((await readFixtureStats(base)).initialize).toBe(1);

    // A transport failure still counts: two in a row put the server into backoff.
    up.value = false;
    await expect(open.callTool("garbler", "echo", { text: "x" })).rejects.toMatchObject({ kind: "downstream-unavailable" });
    await expect(open.callTool("garbler", "echo", { text: "x" })).rejects.toMatchObject({ kind: "downstream-unavailable" });
    expect(open.states().garbler).toMatchObject({ status: "backing-off", attempts: 2 });
  });

  it("says what was wrong: a body that does not parse", async () => {
    const base = echoBase("garble-detail");
    open = new DownstreamPool({
      env: Object.assign({}, env, { GARBLE: garblingBinding(base, { value: true }) }),
      skill: uniqueSkill("garble"),
      servers: { garbler: serverConfig({ binding: "GARBLE", url: "https://garble.internal/mcp", transport: "streamable-http" }) },
    });
    const error = await open.callTool("garbler", "echo", { text: "garbage" }).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ kind: "downstream-malformed-response", serverId: "garbler", target: "echo" });
    expect((error as Error).message).toMatch(/malformed response: .*JSON/i);
  });
});
