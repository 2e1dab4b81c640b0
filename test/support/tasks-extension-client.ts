import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { createTaskSessionFromClient, type TaskEnabledSession, type WithTasksOptions } from "@modelcontextprotocol/ext-tasks/client";
import type { JsonValue } from "@modelcontextprotocol/ext-tasks/core";

type FetchFn = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

const PROTOCOL = "2026-07-28";
const CLIENT_INFO = { name: "slipsnisse-tasks-v2-test", version: "0.0.0" };

/**
 * An SDK v2 client pinned to 2026-07-28 with `@modelcontextprotocol/ext-tasks` on top, as the
 * package documents for a Tasks-extension server: the SDK's codec refuses task wire shapes, so
 * tools/call and tasks/* go through `rawDispatch`, a plain POST with the routing headers
 * (SEP-2243: `Mcp-Method`, and `Mcp-Name` with the tool name or task id).
 */
export async function connectTasksV2(
  url: string,
  fetchFn: FetchFn,
  options: Pick<WithTasksOptions, "onInputRequest"> & { headers?: Record<string, string> } = {},
): Promise<{
  client: Client;
  tasks: TaskEnabledSession;
  raw: (method: string, params: Record<string, unknown>, headers?: Record<string, string>) => Promise<RawAnswer>;
}> {
  const client = new Client(CLIENT_INFO, { versionNegotiation: { mode: { pin: PROTOCOL } }, capabilities: { elicitation: { form: {} } } });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { fetch: fetchFn, requestInit: { headers: options.headers ?? {} } }));
  let next = 0;
  const post = async (body: Record<string, unknown>, extraHeaders: Record<string, string> = {}, signal?: AbortSignal): Promise<RawAnswer> => {
    const params = (body.params ?? {}) as { taskId?: unknown; name?: unknown };
    const name = typeof params.taskId === "string" ? params.taskId : typeof params.name === "string" ? params.name : undefined;
    const id = `raw-${++next}`;
    const response = await fetchFn(url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": PROTOCOL,
        "mcp-method": String(body.method),
        ...(name === undefined ? {} : { "mcp-name": name }),
        ...options.headers,
        ...extraHeaders,
      },
      body: JSON.stringify({ jsonrpc: "2.0", id, ...body }),
      ...(signal ? { signal } : {}),
    });
    return { status: response.status, ...(await jsonRpcAnswer(response, id)) };
  };
  const rawDispatch = async (request: JsonValue, dispatch?: { signal?: AbortSignal }) => {
    const answer = await post(request as Record<string, unknown>, {}, dispatch?.signal);
    if (answer.error) return { kind: "error" as const, error: answer.error };
    return { kind: "result" as const, result: (answer.result ?? {}) as JsonValue };
  };
  const tasks = createTaskSessionFromClient(client, {
    endpointId: "slipsnisse-tasks-v2",
    rawDispatch,
    v2RequestFraming: { protocolVersion: PROTOCOL, clientInfo: CLIENT_INFO, clientCapabilities: { elicitation: { form: {} } } },
    ...(options.onInputRequest ? { onInputRequest: options.onInputRequest } : {}),
  });
  const raw = (method: string, params: Record<string, unknown>, headers?: Record<string, string>) => post({ method, params }, headers);
  return { client, tasks, raw };
}

export interface RawAnswer {
  status: number;
  result?: Record<string, unknown>;
  error?: { code: number; message: string; data?: JsonValue };
}

/** The JSON-RPC answer to request `id`: a JSON body, or the matching `data:` line of an SSE stream. */
async function jsonRpcAnswer(response: Response, id: string): Promise<Omit<RawAnswer, "status">> {
  const text = await response.text();
  const candidates = text.trimStart().startsWith("{")
    ? [text]
    : text
        .split("\n")
        .filter((line) => line.startsWith("data:"))
        .map((line) => line.slice(5).trim());
  for (const candidate of candidates) {
    try {
      const message = JSON.parse(candidate) as { id?: unknown; result?: Record<string, unknown>; error?: RawAnswer["error"] };
      if (message.id === id || (message.id === undefined && message.error))
        return { ...(message.result ? { result: message.result } : {}), ...(message.error ? { error: message.error } : {}) };
    } catch {
      // a keep-alive or partial line
    }
  }
  throw new Error(`No JSON-RPC answer to ${id} (HTTP ${response.status}): ${text.slice(0, 300)}`);
}

/** The `_meta` a 2026-07-28 request carries; `tasks` adds the Tasks extension to its client capabilities. */
export function requestMeta(tasks: boolean): Record<string, unknown> {
  return {
    "io.modelcontextprotocol/protocolVersion": PROTOCOL,
    "io.modelcontextprotocol/clientInfo": CLIENT_INFO,
    "io.modelcontextprotocol/clientCapabilities": tasks ? { extensions: { "io.modelcontextprotocol/tasks": {} } } : {},
  };
}
