import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EchoExpertStack, fakeModelExpert, startEchoExpertStack } from "./harness/echo-expert-stack";
import { textReply, toolCallsReply, toolResultMessages } from "./harness/fake-openai-server";
import { waitFor } from "../support/wait-for";

/**
 * A 2025-11-25 call's SSE stream dropped mid-call and resumed (Streamable HTTP "Resumability and
 * Redelivery"): the SDK v2 client's connection is cut right after the first progress event, the
 * run goes on in the session, the client reconnects with `Last-Event-ID` (after the priming
 * event's `retry`), and gets the progress it missed, none twice, and the answer.
 */
describe("a dropped call stream resumed with Last-Event-ID through wrangler dev", () => {
  let stack: EchoExpertStack;
  let release = () => {};

  beforeAll(async () => {
    stack = await startEchoExpertStack({
      tag: "resumable-stream",
      experts: (model) => [
        fakeModelExpert(model, {
          name: "echo_expert",
          description: "Echoes the query through the fixture server, twice.",
          internal_tools: { fx: ["echo"] },
          budget: { max_steps: 5, timeout_ms: 30_000, max_output_tokens: 512, max_tool_calls: 4, max_tool_result_bytes: 4_096 },
        }),
      ],
    });
  }, 120_000);
  afterAll(async () => {
    release();
    await stack?.stop();
  });

  it("misses no progress and gets the answer", async () => {
    let open = () => {};
    const opened = new Promise<void>((resolve) => (open = resolve));
    release = open;
    // Step 1 and 2 echo; the second step waits until the first stream is gone; step 3 answers.
    stack.fake.reset(async (request) => {
      const results = toolResultMessages(request);
      if (results.length === 0) return toolCallsReply({ name: "fx__echo", arguments: { text: "one" } });
      if (results.length === 1) {
        await opened;
        return toolCallsReply({ name: "fx__echo", arguments: { text: "two" } });
      }
      return textReply(`downstream said: ${results.map((r) => r.content).join(" | ")}`);
    });

    const dropping = cuttingFirstCall((body) => dropAfterFirstProgress(body, () => release()));
    const client = new Client({ name: "slipsnisse-e2e-resume", version: "0.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${stack.dev.baseUrl}/mcp`), { fetch: dropping.fetch }));
    try {
      expect(client.getNegotiatedProtocolVersion()).toBe("2025-11-25");
      const progress: number[] = [];
      const result = await client.callTool(
        { name: "echo_expert", arguments: { query: "resume me" } },
        { onprogress: (event) => progress.push(event.progress), timeout: 30_000 },
      );
      expect(dropping.cut).toBe(true);
      // The client resumed after the first progress event it saw.
      expect(dropping.resumedWith).toHaveLength(1);
      expect(dropping.resumedWith[0]).toMatch(/^[0-9a-f-]{36}:1$/);
      // Every step's progress once, in order, the ones sent after the drop included.
      expect(progress.length).toBeGreaterThanOrEqual(3);
      expect(progress).toEqual(progress.map((_value, index) => index + 1));
      const text = (result.content as Array<{ type: string; text?: string }>)[0]?.text ?? "";
      expect(text).toContain("downstream said:");
      expect(text).toContain("two");
    } finally {
      release();
      await client.close();
    }
  }, 60_000);

  /**
   * Issue 35.5: a client that reconnects at once (0 ms: the priming event's `retry` rewritten to
   * 0, which the SDK client takes as its delay) is back before the server noticed the drop. The
   * drop, noticed after, must not give the run up while the resumed connection reads it. The
   * model's second step waits for the server's word that it saw the drop and kept the run (or,
   * without it, for as long as a cancel would have taken, so the old order-dependent cancel shows).
   */
  it("a resume at once, before the server noticed the drop, is not cancelled: the answer comes on the resumed stream", async () => {
    const kept = /call stream dropped; another connection reads it/g;
    const keptBefore = stack.dev.logs().match(kept)?.length ?? 0;
    stack.fake.reset(async (request) => {
      const results = toolResultMessages(request);
      if (results.length === 0) return toolCallsReply({ name: "fx__echo", arguments: { text: "one" } });
      if (results.length === 1) {
        await waitFor(
          "the server to notice the drop and keep the run",
          () => ((stack.dev.logs().match(kept)?.length ?? 0) > keptBefore ? true : undefined),
          12_000,
        ).catch(() => undefined);
        return toolCallsReply({ name: "fx__echo", arguments: { text: "two" } });
      }
      return textReply(`downstream said: ${results.map((r) => r.content).join(" | ")}`);
    });

    const dropping = cuttingFirstCall((body) => dropAfterFirstProgress(retryAtOnce(body), () => undefined));
    const client = new Client({ name: "slipsnisse-e2e-resume-at-once", version: "0.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${stack.dev.baseUrl}/mcp`), { fetch: dropping.fetch }));
    try {
      const result = await client.callTool(
        { name: "echo_expert", arguments: { query: "resume me at once" } },
        { onprogress: () => undefined, timeout: 30_000 },
      );
      expect(dropping.cut).toBe(true);
      expect(dropping.resumedWith).toHaveLength(1);
      const text = (result.content as Array<{ type: string; text?: string }>)[0]?.text ?? "";
      expect(result.isError).toBeFalsy();
      expect(text).toContain("downstream said:");
      expect(text).toContain("two");
      // The drop reached the server after the resume, and the server said it kept the run.
      expect(stack.dev.logs().match(kept)?.length ?? 0).toBeGreaterThan(keptBefore);
    } finally {
      await client.close();
    }
  }, 60_000);
});

/** Passes the stream through until a progress event went by, then drops the connection. */
function dropAfterFirstProgress(body: ReadableStream<Uint8Array>, onDrop: () => void): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let seen = "";
  let drop = false;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (drop) {
        await reader.cancel().catch(() => undefined);
        onDrop();
        controller.error(new Error("connection dropped"));
        return;
      }
      const { value, done } = await reader.read();
      if (done) return controller.close();
      controller.enqueue(value);
      seen += decoder.decode(value, { stream: true });
      // Dropped on the next read, so the progress event itself reaches the client.
      if (seen.includes("notifications/progress")) drop = true;
    },
  });
}

/** The priming event's `retry` set to 0: the SDK client reconnects at once (it takes the server's retry as its delay). */
function retryAtOnce(body: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  const decoder = new TextDecoder();
  return body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        controller.enqueue(encoder.encode(decoder.decode(chunk, { stream: true }).replace(/^retry: \d+$/m, "retry: 0")));
      },
    }),
  );
}

/**
 * A fetch for the SDK client whose first `tools/call` response stream is passed through `cut`
 * (which drops it), and which notes the Last-Event-ID of every resume the client then sends.
 */
function cuttingFirstCall(cut: (body: ReadableStream<Uint8Array>) => ReadableStream<Uint8Array>) {
  const state = { cut: false, resumedWith: [] as string[] };
  const fetchCut = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const lastEventId = new Headers(init?.headers).get("last-event-id");
    if (init?.method === "GET" && lastEventId) state.resumedWith.push(lastEventId);
    const response = await fetch(input, init);
    const isCall = init?.method === "POST" && typeof init.body === "string" && init.body.includes('"tools/call"');
    if (!isCall || state.cut || !response.body) return response;
    state.cut = true;
    return new Response(cut(response.body), { status: response.status, headers: response.headers });
  };
  return Object.assign(state, { fetch: fetchCut });
}
