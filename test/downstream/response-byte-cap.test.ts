import { describe, expect, it } from "vitest";
import { DownstreamResponseTooLargeError } from "../../src/downstream/downstream-errors";
import { capDownstreamFetch } from "../../src/downstream/downstream-response-cap";
import { capEventStream, capPlainBody } from "../../src/downstream/response-byte-cap";

const CAP = 1_024;
const encoder = new TextEncoder();

/** A stream that delivers `text` in chunks of `size` bytes (boundaries fall anywhere, CRLF split included). */
function chunked(text: string, size: number): ReadableStream<Uint8Array> {
  const bytes = encoder.encode(text);
  let offset = 0;
  return new ReadableStream({
    pull(controller) {
      if (offset >= bytes.byteLength) return controller.close();
      controller.enqueue(bytes.slice(offset, offset + size));
      offset += size;
    },
  });
}

/** The legacy SSE endpoint's shape: one GET stream carrying every answer (no request id known). */
async function throughGetStream(text: string, size: number): Promise<string> {
  const fetch = capDownstreamFetch("srv", CAP, async () => new Response(chunked(text, size), { headers: { "content-type": "text/event-stream" } }));
  return (await fetch("https://srv.example/sse", { method: "GET" })).text();
}

const message = (id: number, text: string) =>
  `event: message\ndata: ${JSON.stringify({ result: { content: [{ type: "text", text }] }, jsonrpc: "2.0", id })}\n\n`;

describe("per-event caps on an SSE stream", () => {
  for (const size of [1, 7, 100, 10_000]) {
    it(`events under the cap pass byte for byte (chunks of ${size}, LF and CRLF)`, async () => {
      const text = `${message(1, "a".repeat(900))}${message(2, "b")}`.replaceAll("\n", size === 7 ? "\r\n" : "\n");
      expect(await throughGetStream(text, size)).toBe(text);
    });

    it(`an oversized answer with its id at the end is replaced by an error for that id, and the next event passes (chunks of ${size})`, async () => {
      const out = await throughGetStream(`${message(7, "x".repeat(5_000))}${message(8, "after")}`, size);
      // What a client dispatches as messages: events whose last `event:` field is `message`; the cut remains of
      // the oversized event end as `slipsnisse-cut`, which MCP clients ignore.
      const events = out.split("\n\n").filter((event) => [...event.matchAll(/^event: (.*)$/gm)].at(-1)?.[1] === "message");
      const data = events.map((event) => JSON.parse(/^data: (.*)$/m.exec(event)?.[1] ?? "null") as { id?: number; error?: { data?: unknown } });
      expect(data).toHaveLength(2);
      expect(data.at(-2)).toMatchObject({ id: 7, error: { data: { reason: "slipsnisse/response-too-large", maxBytes: CAP } } });
      expect(data.at(-1)).toMatchObject({ id: 8, result: { content: [{ text: "after" }] } });
      expect(out).toContain("event: slipsnisse-cut\n\n");
      expect(out.length).toBeLessThan(3 * CAP);
    });
  }

  it("events each under the cap but together over it pass byte for byte, wherever the chunks split their blank lines", async () => {
    const events = [message(1, "a".repeat(500)), message(2, "b".repeat(500)), message(3, "c"), message(4, "d".repeat(700))].join("");
    for (const eol of ["\n", "\r\n", "\r"]) {
      const text = events.replaceAll("\n", eol);
      for (let size = 2; size <= 13; size += 1) expect(await throughGetStream(text, size), `chunks of ${size}, ${JSON.stringify(eol)}`).toBe(text);
      for (const size of [256, 700, 1_024, 1_300, 3_000]) expect(await throughGetStream(text, size), `chunks of ${size}, ${JSON.stringify(eol)}`).toBe(text);
    }
  });

  it("an event that grows past the cap over many small chunks is still cut, and the next one passes", async () => {
    for (const size of [3, 64, 200]) {
      const out = await throughGetStream(`${message(1, "ok")}${message(7, "x".repeat(1_500))}${message(8, "after")}`, size);
      expect(out, `chunks of ${size}`).toContain("event: slipsnisse-cut\n\n");
      expect(out).toContain('"id":7,"error"');
      expect(out.startsWith(message(1, "ok"))).toBe(true);
      expect(out.endsWith(message(8, "after"))).toBe(true);
    }
  });

  it("an oversized answer with its id first (jsonrpc, id, result) is replaced at once", async () => {
    const text = `event: message\ndata: ${JSON.stringify({ jsonrpc: "2.0", id: "r-1", result: { text: "y".repeat(5_000) } })}\n\n`;
    expect(await throughGetStream(text, 64)).toContain('"id":"r-1","error"');
  });

  it("an oversized event whose id cannot be found fails the stream with the cap error", async () => {
    const body = capEventStream(chunked(`data: ${"z".repeat(5_000)}\n\n`, 100), {
      maxBytes: CAP,
      endAfterReplacement: () => false,
      replace: () => undefined,
      tooLarge: () => new DownstreamResponseTooLargeError("srv", CAP),
    });
    await expect(new Response(body).text()).rejects.toThrow(/larger than its 1024-byte cap/);
  });
});

describe("JSON answers", () => {
  const post = { method: "POST", body: JSON.stringify({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "big" } }) };

  it("a declared Content-Length over the cap is answered by an error for the request's id without reading the body", async () => {
    let pulled = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled += 1;
        controller.enqueue(new Uint8Array(10_000));
      },
    });
    const fetch = capDownstreamFetch(
      "srv",
      CAP,
      async () => new Response(body, { headers: { "content-type": "application/json", "content-length": "50000000" } }),
    );
    const answer = (await (await fetch("https://srv.example/mcp", post)).json()) as { id: number; error: { data: { reason: string } } };
    expect(answer).toMatchObject({ id: 3, error: { data: { reason: "slipsnisse/response-too-large" } } });
    expect(pulled).toBeLessThanOrEqual(1);
  });

  it("stops reading the source once a body passes the cap, and when its reader cancels", async () => {
    const source = () => {
      const seen = { pulls: 0, cancelled: false };
      const body = new ReadableStream<Uint8Array>({
        pull(controller) {
          seen.pulls += 1;
          controller.enqueue(encoder.encode("z".repeat(400)));
        },
        cancel() {
          seen.cancelled = true;
        },
      });
      return { body, seen };
    };
    const endless = source();
    const capped = capPlainBody(endless.body, CAP, () => new Error("over the cap"));
    await expect(new Response(capped).text()).rejects.toThrow("over the cap");
    expect(endless.seen.cancelled).toBe(true);
    expect(endless.seen.pulls).toBeLessThanOrEqual(5);

    const read = source();
    const reader = capPlainBody(read.body, CAP, () => new Error("over the cap")).getReader();
    expect((await reader.read()).value?.byteLength).toBe(400);
    await reader.cancel("done");
    expect(read.seen.cancelled).toBe(true);
  });

  it("a chunked JSON body fails once past the cap", async () => {
    const fetch = capDownstreamFetch(
      "srv",
      CAP,
      async () => new Response(chunked(`{"jsonrpc":"2.0","id":3,"result":"${"q".repeat(5_000)}"}`, 256), { headers: { "content-type": "application/json" } }),
    );
    await expect((await fetch("https://srv.example/mcp", post)).json()).rejects.toThrow(
      /Downstream server "srv" sent a response larger than its 1024-byte cap/,
    );
  });
});
