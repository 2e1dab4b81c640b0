import { describe, expect, it } from "vitest";
import { CallStream } from "../../../src/mcp/delivery/mid-call-requests";

/** An SSE response written as the SDK writes one: each event, and each keep-alive, one whole chunk. */
function sdkResponse(chunks: string[]): { response: Response; push(): void } {
  const encoder = new TextEncoder();
  let controller: ReadableStreamDefaultController<Uint8Array> | undefined;
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      controller = c;
    },
  });
  const response = new Response(body, { headers: { "content-type": "text/event-stream" } });
  return {
    response,
    push() {
      for (const chunk of chunks) controller?.enqueue(encoder.encode(chunk));
      controller?.close();
    },
  };
}

describe("CallStream", () => {
  it("opens a resumable stream with its priming event and numbers the SDK's events, leaving keep-alives and numbered ones as they came", async () => {
    const stream = new CallStream({ id: "s1", retryMs: 500 });
    const requestId = stream.send("elicitation/create", { message: "sure?" });
    const sdk = sdkResponse([
      'event: message\ndata: {"jsonrpc":"2.0","method":"notifications/progress"}\n\n',
      ": keepalive\n\n",
      'event: message\nid: own-7\ndata: {"jsonrpc":"2.0","method":"x"}\n\n',
      'event: message\ndata: {"jsonrpc":"2.0","id":1,"result":{}}\n\n',
    ]);
    const attached = stream.attach(sdk.response);
    expect(attached.headers.get("content-type")).toBe("text/event-stream");
    sdk.push();
    const text = await attached.text();
    expect(text).toBe(
      [
        "id: s1:0\nretry: 500\ndata: \n\n",
        `event: message\ndata: {"jsonrpc":"2.0","id":"${requestId}","method":"elicitation/create","params":{"message":"sure?"}}\n\n`,
        'event: message\nid: s1:1\ndata: {"jsonrpc":"2.0","method":"notifications/progress"}\n\n',
        ": keepalive\n\n",
        'event: message\nid: own-7\ndata: {"jsonrpc":"2.0","method":"x"}\n\n',
        'event: message\nid: s1:2\ndata: {"jsonrpc":"2.0","id":1,"result":{}}\n\n',
      ].join(""),
    );
    // The stream has ended: a request sent now has nowhere to go, and is neither thrown nor kept.
    expect(() => stream.notify("notifications/message", {})).not.toThrow();
  });

  it("passes a stream that is not resumable through unchanged, with requests sent mid-call between its events", async () => {
    const stream = new CallStream();
    const sdk = sdkResponse(['event: message\ndata: {"a":1}\n\n']);
    const attached = stream.attach(sdk.response);
    stream.notify("notifications/elicitation/complete", { elicitationId: "e1" });
    sdk.push();
    expect(await attached.text()).toBe(
      'event: message\ndata: {"jsonrpc":"2.0","method":"notifications/elicitation/complete","params":{"elicitationId":"e1"}}\n\nevent: message\ndata: {"a":1}\n\n',
    );
  });

  it("returns a response that is no event stream as it is", () => {
    const json = Response.json({ ok: true });
    expect(new CallStream({ id: "s", retryMs: 1 }).attach(json)).toBe(json);
  });
});
