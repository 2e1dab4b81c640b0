import { describe, expect, it } from "vitest";
import { readBoundedBody } from "../../../src/mcp/inbound/request-body-limit";

const encoder = new TextEncoder();

function streamed(parts: string[]): Request {
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const part of parts) controller.enqueue(encoder.encode(part));
      controller.close();
    },
  });
  return new Request("https://team.example.com/mcp", { method: "POST", body, duplex: "half" } as RequestInit);
}

describe("readBoundedBody", () => {
  it("reads a body that came in one chunk, and one in many, to the same bytes", async () => {
    for (const parts of [['{"jsonrpc":"2.0","id":1}'], ['{"jsonrpc":', '"2.0",', '"id":1}']]) {
      const read = await readBoundedBody(streamed(parts), 100);
      if (!read.ok) throw new Error("refused");
      expect(new TextDecoder().decode(read.bytes)).toBe('{"jsonrpc":"2.0","id":1}');
      expect(read.bytes.buffer).toBeInstanceOf(ArrayBuffer);
    }
  });

  it("reads a body with a declared length to its bytes, and refuses one whose declared or actual length is past the limit", async () => {
    const post = (body: string, length: number) =>
      new Request("https://team.example.com/mcp", { method: "POST", body, headers: { "content-length": String(length) } });
    const text = '{"jsonrpc":"2.0","id":1,"method":"tools/list"}';
    const read = await readBoundedBody(post(text, text.length), 100);
    if (!read.ok) throw new Error("refused");
    expect(new TextDecoder().decode(read.bytes)).toBe(text);
    // Declared past the limit; and declared within it by a body that outgrows it (no HTTP framing in between).
    for (const [body, length] of [
      ["x".repeat(101), 101],
      ["x".repeat(101), 10],
    ] as const) {
      const over = await readBoundedBody(post(body, length), 100);
      if (over.ok) throw new Error("accepted");
      expect(over.response.status).toBe(413);
    }
  });

  it("refuses a body past the limit, in one chunk or as it grows, with the SDK's 413", async () => {
    for (const parts of [["x".repeat(101)], ["x".repeat(60), "x".repeat(60)]]) {
      const read = await readBoundedBody(streamed(parts), 100);
      if (read.ok) throw new Error("accepted");
      expect(read.response.status).toBe(413);
      expect(await read.response.json()).toMatchObject({ error: { code: -32000, message: expect.stringContaining("100 bytes") } });
    }
  });
});
