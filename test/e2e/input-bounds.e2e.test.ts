import { request as httpRequest } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeOpenAI, textReply, type FakeOpenAIServer } from "./harness/fake-openai-server";
import { connectMcpClient, resultText, type McpTestClient } from "./harness/mcp-clients";
import { pushSharedSkill, type SharedSkill, sharedWranglerDev } from "./harness/shared-wrangler-dev";

const MIB = 1024 * 1024;

/** One raw POST through wrangler dev: status and body, or the socket error a client would see. */
function postRaw(url: string, body: Buffer, chunked: boolean): Promise<{ status: number; contentType: string; text: string } | { error: string }> {
  return new Promise((resolve) => {
    const headers: Record<string, string | number> = { "content-type": "application/json", accept: "application/json, text/event-stream" };
    if (!chunked) headers["content-length"] = body.length;
    const req = httpRequest(url, { method: "POST", headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () =>
        resolve({ status: res.statusCode ?? 0, contentType: String(res.headers["content-type"] ?? ""), text: Buffer.concat(chunks).toString("utf8") }),
      );
      res.on("error", (error) => resolve({ error: String(error) }));
    });
    req.on("error", (error) => resolve({ error: String(error) }));
    req.setTimeout(60_000, () => req.destroy(new Error("timeout")));
    // Written in pieces, as a client uploading a large body does.
    const piece = 256 * 1024;
    let offset = 0;
    const writeMore = () => {
      while (offset < body.length) {
        const ok = req.write(body.subarray(offset, offset + piece));
        offset += piece;
        if (!ok) return void req.once("drain", writeMore);
      }
      req.end();
    };
    writeMore();
  });
}

function toolCallBody(query: string): Buffer {
  return Buffer.from(JSON.stringify({ jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "ask", arguments: { query } } }));
}

describe("input bounds through wrangler dev", () => {
  let skill: SharedSkill;
  let fake: FakeOpenAIServer;
  let client: McpTestClient;

  beforeAll(async () => {
    fake = await startFakeOpenAI();
    skill = await pushSharedSkill(await sharedWranglerDev(), "input-bounds", {
      experts: [{ name: "ask", description: "Answers.", provider: "openai-compatible", base_url: fake.baseURL, model: "fake" }],
    });
    client = await connectMcpClient("v2-2025", skill.mcpUrl, { timeoutMs: 60_000 });
  });
  afterAll(async () => {
    await client?.close();
    await fake?.close();
  });

  it("answers a body over 4 MiB with 413 JSON, not a reset, however it is uploaded", async () => {
    // Before the body was drained, chunked uploads of 20 and 60 MiB were mostly answered with
    // ECONNRESET or EPIPE (3 to 4 of 5 attempts each); Content-Length uploads were not.
    const attempts: Array<[number, boolean]> = [
      [5, false],
      [40, false],
      [5, true],
      ...Array.from({ length: 5 }, (): [number, boolean] => [20, true]),
      [60, true],
      [60, true],
    ];
    const outcomes: string[] = [];
    for (const [mib, chunked] of attempts) {
      const answer = await postRaw(skill.mcpUrl, toolCallBody("x".repeat(mib * MIB)), chunked);
      if (!("text" in answer)) {
        outcomes.push(`${mib} MiB${chunked ? " chunked" : ""}: ${answer.error}`);
        continue;
      }
      outcomes.push(`${mib} MiB${chunked ? " chunked" : ""}: ${answer.status} ${answer.contentType}`);
      if (answer.status === 413) {
        expect(JSON.parse(answer.text)).toMatchObject({
          jsonrpc: "2.0",
          error: { code: -32000, message: "Payload Too Large: Request body must not exceed 4194304 bytes" },
        });
      }
    }
    expect(outcomes).toEqual(attempts.map(([mib, chunked]) => `${mib} MiB${chunked ? " chunked" : ""}: 413 application/json`));
    expect(fake.requests).toHaveLength(0);
  }, 120_000);

  it("the MCP client sees the 413's JSON-RPC error for a 5 MiB tool call", async () => {
    const error = await client.callTool("ask", { query: "x".repeat(5 * MIB) }).catch((caught: unknown) => caught);
    expect(String(error)).toContain("Payload Too Large: Request body must not exceed 4194304 bytes");
    expect(fake.requests).toHaveLength(0);
  });

  it("a 2 MB query is a tool error naming the expert's limit and the size, and the model is never called", async () => {
    const query = "q".repeat(2_000_000);
    const result = await client.callTool("ask", { query });
    expect(result.isError).toBe(true);
    expect(resultText(result)).toContain(`they are ${JSON.stringify({ query }).length} bytes of JSON, over its limit of 32768 bytes (budget.max_input_bytes)`);
    expect(fake.requests).toHaveLength(0);
  });

  it("a query under the limit still reaches the model", async () => {
    fake.reset([textReply("small enough")]);
    const result = await client.callTool("ask", { query: "q".repeat(30_000) });
    expect(resultText(result)).toMatch(/^small enough/);
    expect(fake.requests).toHaveLength(1);
  });

  it("arguments nested 1,000 levels are refused with the limit's JSON-RPC error by every SDK client and transport, and the model is never called", async () => {
    const nested: unknown = JSON.parse(`${"[".repeat(1_000)}${"]".repeat(1_000)}`);
    fake.reset([textReply("must not run")]);
    for (const kind of ["v2-2025", "v2-2026", "v1-http", "v1-sse"] as const) {
      const deepClient = await connectMcpClient(kind, kind.endsWith("sse") ? skill.sseUrl : skill.mcpUrl, { timeoutMs: 20_000 });
      try {
        const error = await deepClient.callTool("ask", { query: "q", deep: nested }).catch((caught: unknown) => caught);
        expect(String(error), kind).toContain("nests arrays and objects more than 64 levels deep; the limit is 64");
      } finally {
        await deepClient.close();
      }
    }
    expect(fake.requests).toHaveLength(0);
  });
});
