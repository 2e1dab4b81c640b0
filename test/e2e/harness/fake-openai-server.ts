import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { completionBody, errorBody, streamEvents } from "./fake-openai-responses";
import { chatRequestSchema, type ChatRequest, type ReplyScript, type ScriptedReply } from "./fake-openai-types";

export * from "./fake-openai-types";

export interface RecordedCall {
  request: ChatRequest;
  /** performance.now() when the request body was read and when the reply was fully written. */
  receivedAt: number;
  answeredAt: number;
  /** The request's W3C `traceparent` header, if it had one. */
  traceparent: string | null;
}

export interface FakeOpenAIServer {
  /** e.g. http://127.0.0.1:40000/v1 — the `baseURL` for createOpenAICompatible. */
  baseURL: string;
  /** Every chat request received, in arrival order (kept until `reset()`). */
  readonly requests: ChatRequest[];
  readonly calls: RecordedCall[];
  /** Replace the script (and forget recorded requests). */
  reset(script?: ReplyScript): void;
  close(): Promise<void>;
}

export interface FakeOpenAIOptions {
  script?: ReplyScript;
  /** Latency added before every reply (0 by default). */
  delayMs?: number;
  /** Set false in long benchmarks to keep memory flat; `calls` stays empty then. */
  record?: boolean;
  /** Served as `GET /v1/models` (what `npm start` probes for a local server); 404 when absent. */
  models?: string[];
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

function sendJson(res: ServerResponse, status: number, body: object, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { ...headers, "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
}

/** Queues are copied so that consuming them never mutates the caller's array. */
function copyScript(script: ReplyScript): ReplyScript {
  return typeof script === "function" ? script : [...script];
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A scripted OpenAI-compatible chat completions server on 127.0.0.1: `POST /v1/chat/completions`,
 * JSON or SSE (`stream: true`), replies taken from a queue or computed from the request.
 * An exhausted queue answers 500 so that a test that under-scripts fails loudly.
 */
export async function startFakeOpenAI(options: FakeOpenAIOptions = {}): Promise<FakeOpenAIServer> {
  let script: ReplyScript = copyScript(options.script ?? []);
  let index = 0;
  const requests: ChatRequest[] = [];
  const calls: RecordedCall[] = [];
  const record = options.record ?? true;

  async function nextReply(request: ChatRequest, i: number): Promise<ScriptedReply> {
    if (typeof script === "function") return script(request, i);
    return script.shift() ?? { kind: "error", status: 500, message: `fake model: no scripted reply left for request #${i}` };
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? "/", "http://fake").pathname;
    if (req.method === "GET" && path === "/v1/models" && options.models) {
      sendJson(res, 200, { object: "list", data: options.models.map((id) => ({ id, object: "model", owned_by: "fake" })) });
      return;
    }
    if (req.method !== "POST" || path !== "/v1/chat/completions") {
      await readBody(req);
      sendJson(res, 404, errorBody(`fake model: no route ${req.method} ${path}`, 404));
      return;
    }
    const receivedAt = performance.now();
    let json: unknown;
    try {
      json = JSON.parse(await readBody(req));
    } catch {
      sendJson(res, 400, errorBody("fake model: body is not JSON", 400));
      return;
    }
    const parsed = chatRequestSchema.safeParse(json);
    if (!parsed.success) {
      sendJson(res, 400, errorBody(`fake model: not a chat request: ${parsed.error.message}`, 400));
      return;
    }
    const request = parsed.data;
    const i = index++;
    if (record) requests.push(request);
    const reply = await nextReply(request, i);
    const delay = (options.delayMs ?? 0) + (reply.delayMs ?? 0);
    if (delay > 0) await sleep(delay);
    if (reply.kind === "error") {
      sendJson(res, reply.status, errorBody(reply.message, reply.status), reply.headers);
    } else if (request.stream === true) {
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
      for (const data of streamEvents(reply, request.model, i)) res.write(`data: ${data}\n\n`);
      res.end();
    } else {
      sendJson(res, 200, completionBody(reply, request.model, i));
    }
    const traceparent = typeof req.headers.traceparent === "string" ? req.headers.traceparent : null;
    if (record) calls.push({ request, receivedAt, answeredAt: performance.now(), traceparent });
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) sendJson(res, 500, errorBody(`fake model crashed: ${String(error)}`, 500));
      else res.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    calls,
    reset(next = []) {
      script = copyScript(next);
      index = 0;
      requests.length = 0;
      calls.length = 0;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
