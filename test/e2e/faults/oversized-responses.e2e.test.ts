import { readdir, readFile } from "node:fs/promises";
import { gzipSync } from "node:zlib";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { readJsonBody } from "../../fixtures/fixture-stats";
import { listenOnLoopback, type LoopbackServer } from "../../fixtures/loopback-http";
import { loadCatalog } from "../harness/catalog-admin";
import { startFakeOpenAI, textReply, toolCallsReply, toolResultMessages, type FakeOpenAIServer } from "../harness/fake-openai-server";
import { connectMcpClient, resultText, type McpTestClient } from "../harness/mcp-clients";
import { startWranglerDev, type WranglerDev } from "../harness/wrangler-dev";

const SKILL = "default";
const HUGE_BYTES = 60 * 1024 * 1024;
const CAP_BYTES = 4 * 1024 * 1024;
const budget = { max_steps: 4, timeout_ms: 60_000, max_output_tokens: 2_048, max_tool_calls: 3, max_tool_result_bytes: 2_048 };

/**
 * A real Node MCP server (SDK v1) whose `huge` tool answers 60 MB, over JSON (`/mcp-json`) and
 * over SSE (`/mcp-sse`), and an openai-compatible "model" whose answer is 20 MB: what took the
 * local workerd from 258 MB to 586 MB resident. With the caps the call answers with an error
 * naming the server (or model) and the cap, and workerd's memory stays put.
 */
async function startHugeServer(): Promise<LoopbackServer & { hugeCalls(): number }> {
  let hugeCalls = 0;
  const server = await listenOnLoopback(async (req, res) => {
    const route = new URL(req.url ?? "/", "http://fixture").pathname;
    if (req.method === "POST" && (route === "/v1/chat/completions" || route === "/v1-gzip/chat/completions")) {
      await readJsonBody(req);
      const content = "z".repeat(20 * 1024 * 1024);
      const body = JSON.stringify({
        id: "c1",
        object: "chat.completion",
        created: 1,
        model: "bloated",
        choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }],
      });
      if (route === "/v1/chat/completions") res.writeHead(200, { "content-type": "application/json" }).end(body);
      else gzipped(res, body);
      return;
    }
    if (req.method !== "POST" || !["/mcp-json", "/mcp-sse", "/mcp-gzip", "/mcp-lying"].includes(route)) {
      res.writeHead(405).end();
      return;
    }
    const body = await readJsonBody(req);
    const hugeCall = hugeCallId(body);
    if (hugeCall !== undefined && (route === "/mcp-gzip" || route === "/mcp-lying")) {
      hugeCalls += 1;
      const answer = JSON.stringify({ jsonrpc: "2.0", id: hugeCall, result: { content: [{ type: "text", text: "y".repeat(HUGE_BYTES) }] } });
      if (route === "/mcp-gzip") gzipped(res, answer);
      else {
        // A Content-Length of 64 bytes, then 60 MB more on the connection: HTTP framing ends the
        // body at 64, which is what lets the caps leave a body that declares its length unwatched.
        res.socket?.end(`HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 64\r\nconnection: close\r\n\r\n${answer}`);
      }
      return;
    }
    const mcp = new McpServer({ name: "huge", version: "1.0.0" });
    mcp.registerTool("huge", { description: "Answers 60 MB of text." }, async () => {
      hugeCalls += 1;
      return { content: [{ type: "text", text: "y".repeat(HUGE_BYTES) }] };
    });
    mcp.registerTool("echo", { description: "Echoes.", inputSchema: { text: z.string() } }, async ({ text }) => ({ content: [{ type: "text", text }] }));
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: route !== "/mcp-sse" });
    res.on("close", () => {
      void transport.close();
      void mcp.close();
    });
    await mcp.connect(transport);
    await transport.handleRequest(req, res, body);
  });
  return { ...server, hugeCalls: () => hugeCalls };
}

/** A gzip body whose Content-Length is the few KB it takes on the wire; it inflates to what `text` is (a zip bomb). */
function gzipped(res: import("node:http").ServerResponse, text: string): void {
  const packed = gzipSync(Buffer.from(text));
  res.writeHead(200, { "content-type": "application/json", "content-encoding": "gzip", "content-length": String(packed.byteLength) }).end(packed);
}

function hugeCallId(body: unknown): string | number | undefined {
  const message = z
    .looseObject({ method: z.literal("tools/call"), id: z.union([z.string(), z.number()]), params: z.looseObject({ name: z.literal("huge") }) })
    .safeParse(body);
  return message.success ? message.data.id : undefined;
}

/** Resident memory (MB) of the workerd that runs the Worker (started with --inspector-addr) in wrangler dev's group. */
async function workerdRssMb(pgid: number): Promise<number> {
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, "utf8").catch(() => "");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (!/\((.*workerd.*)\)/.test(stat) || Number(fields[2]) !== pgid) continue;
    if (!(await readFile(`/proc/${entry}/cmdline`, "utf8").catch(() => "")).includes("--inspector-addr")) continue;
    const rss = /VmRSS:\s+(\d+) kB/.exec(await readFile(`/proc/${entry}/status`, "utf8"))?.[1];
    return Math.round(Number(rss) / 1024);
  }
  throw new Error("no workerd with --inspector-addr in wrangler dev's process group");
}

describe("oversized responses end to end", () => {
  let dev: WranglerDev;
  let fake: FakeOpenAIServer;
  let huge: LoopbackServer & { hugeCalls(): number };
  let client: McpTestClient;

  const expert = (name: string, server: string, baseUrl: string, model = "fake-tool-caller") => ({
    name,
    description: `Uses ${server}.`,
    internal_tools: { [server]: ["huge", "echo"] },
    provider: "openai-compatible" as const,
    base_url: baseUrl,
    model,
    budget,
  });

  beforeAll(async () => {
    [fake, huge] = await Promise.all([startFakeOpenAI(), startHugeServer()]);
    fake.reset((request) => {
      const results = toolResultMessages(request);
      if (results.length > 0) return textReply(`tool said: ${results.map((r) => r.content).join(" | ")}`);
      const user = String(request.messages.filter((m) => m.role === "user").at(-1)?.content);
      const asked = /call (\S+) (\{.*\})/.exec(user);
      return asked ? toolCallsReply({ name: asked[1] ?? "", arguments: asked[2] ?? "{}" }) : textReply("nothing asked");
    });
    dev = await startWranglerDev();
    await loadCatalog(dev.baseUrl, {
      skills: {
        [SKILL]: {
          servers: {
            hugejson: { url: `${huge.origin}/mcp-json`, transport: "streamable-http" },
            hugesse: { url: `${huge.origin}/mcp-sse`, transport: "streamable-http" },
            hugegzip: { url: `${huge.origin}/mcp-gzip`, transport: "streamable-http" },
            hugelying: { url: `${huge.origin}/mcp-lying`, transport: "streamable-http" },
          },
          experts: [
            expert("ask_hugejson", "hugejson", fake.baseURL),
            expert("ask_hugesse", "hugesse", fake.baseURL),
            expert("ask_bloated", "hugejson", `${huge.origin}/v1`, "bloated"),
            expert("ask_hugegzip", "hugegzip", fake.baseURL),
            expert("ask_hugelying", "hugelying", fake.baseURL),
            expert("ask_bloated_gzip", "hugejson", `${huge.origin}/v1-gzip`, "bloated"),
          ],
        },
      },
    });
    client = await connectMcpClient("v2-2025", `${dev.baseUrl}/mcp`, { timeoutMs: 120_000 });
  }, 120_000);
  afterAll(async () => {
    await client?.close();
    await dev?.stop();
    await Promise.allSettled([fake?.close(), huge?.stop()]);
  });

  for (const server of ["hugejson", "hugesse", "hugegzip"] as const) {
    it(`a 60 MB tool result from ${server} answers with the cap error naming the server, and the next call works`, async () => {
      const calls = huge.hugeCalls();
      const before = await workerdRssMb(dev.pgid);
      const result = await client.callTool(`ask_${server}`, { query: `call ${server}__huge {}` });
      const after = await workerdRssMb(dev.pgid);
      console.log(`[oversized-responses] ${server}: workerd RSS ${before} MB before the 60 MB result, ${after} MB after (+${after - before} MB)`);
      const text = resultText(result);
      expect(text).toContain(`Downstream server "${server}" sent a response larger than its ${CAP_BYTES}-byte cap (max_response_bytes)`);
      expect(huge.hugeCalls()).toBe(calls + 1);
      // The cap stops reading at 4 MiB: nothing like the 328 MB the uncapped result cost.
      expect(after - before).toBeLessThan(100);
      const next = await client.callTool(`ask_${server}`, { query: `call ${server}__echo {"text":"still here"}` });
      expect(resultText(next)).toMatch(/^tool said: still here/);
    }, 120_000);
  }

  it("a tool result whose Content-Length says 64 bytes, followed by 60 MB more, is read as the 64 bytes: a tool error naming the server", async () => {
    const calls = huge.hugeCalls();
    const before = await workerdRssMb(dev.pgid);
    const result = await client.callTool("ask_hugelying", { query: "call hugelying__huge {}" });
    const after = await workerdRssMb(dev.pgid);
    console.log(`[oversized-responses] hugelying: workerd RSS ${before} MB before, ${after} MB after (+${after - before} MB)`);
    expect(huge.hugeCalls()).toBe(calls + 1);
    // The truncated JSON fails the call; the model hears of the error with the server named.
    expect(resultText(result)).toMatch(/^tool said: .*hugelying/s);
    expect(after - before).toBeLessThan(100);
    const next = await client.callTool("ask_hugelying", { query: 'call hugelying__echo {"text":"still here"}' });
    expect(resultText(next)).toMatch(/^tool said: still here/);
  }, 120_000);

  for (const expertName of ["ask_bloated", "ask_bloated_gzip"]) {
    it(`a 20 MB model response (${expertName === "ask_bloated" ? "plain" : "gzip, a few KB on the wire"}) fails the run with an error naming the model and the cap`, async () => {
      const result = await client.callTool(expertName, { query: "anything" });
      expect(result.isError).toBe(true);
      expect(resultText(result)).toContain('openai-compatible model "bloated"');
      expect(resultText(result)).toContain(`larger than the ${8 * 1024 * 1024}-byte cap on model responses`);
    }, 120_000);
  }
});
