import { Client, SSEClientTransport, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { SSEClientTransport as SSEClientTransportV1 } from "@modelcontextprotocol/sdk/client/sse.js";
import { StreamableHTTPClientTransport as StreamableHTTPClientTransportV1 } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";

export { runInspectorCli } from "./inspector-cli";

/**
 * The real MCP clients the end-to-end tests drive the Worker with:
 * - `v2-2025`: SDK v2 Client, plain 2025 handshake (`initialize`, the SDK's default, 2025-11-25)
 * - `v2-2025-06-18`: SDK v2 Client restricted to 2025-06-18 (`supportedProtocolVersions`)
 * - `v2-2026`: SDK v2 Client pinned to 2026-07-28 (`server/discover`, no protocol session)
 * - `v1-http`: SDK v1 Client over Streamable HTTP (its latest 2025 revision)
 * - `v1-sse`: SDK v1 Client over legacy HTTP+SSE (2024-11-05)
 * - `v2-sse`: SDK v2 Client over legacy HTTP+SSE
 * - `v2-sse-2025-06-18`: SDK v2 Client over legacy HTTP+SSE, initializing with revision 2025-06-18
 */
export type McpClientKind = "v2-2025" | "v2-2025-06-18" | "v2-2026" | "v1-http" | "v1-sse" | "v2-sse" | "v2-sse-2025-06-18";

export const ALL_HTTP_CLIENT_KINDS = ["v2-2025", "v2-2025-06-18", "v2-2026", "v1-http"] as const;

export interface ToolCallResult {
  content: Array<{ type: string; text?: string }>;
  isError?: boolean;
  structuredContent?: unknown;
  _meta?: Record<string, unknown>;
}

/** The fields the tests read, from either SDK's result type (v1 may answer in the old `toolResult` form). */
function toToolCallResult(result: Record<string, unknown>): ToolCallResult {
  const parsed = toolCallResultSchema.safeParse(result);
  if (!parsed.success) throw new Error(`not a tools/call result: ${JSON.stringify(result).slice(0, 500)}`);
  return parsed.data;
}

const toolCallResultSchema = z.object({
  content: z.array(z.looseObject({ type: z.string(), text: z.string().optional() })),
  isError: z.boolean().optional(),
  structuredContent: z.unknown().optional(),
  _meta: z.record(z.string(), z.unknown()).optional(),
});

export interface ListedTool {
  name: string;
  description?: string;
  inputSchema: Record<string, unknown>;
  annotations?: { readOnlyHint?: boolean; destructiveHint?: boolean; openWorldHint?: boolean };
}

export interface Progress {
  progress: number;
  total?: number;
  message?: string;
}

/** One connected client, whatever its SDK generation: the calls the tests need. */
export interface McpTestClient {
  kind: McpClientKind;
  /** The protocol revision the connection negotiated (undefined for SDK v1, which does not expose it). */
  protocolVersion: string | undefined;
  listTools(): Promise<ListedTool[]>;
  callTool(name: string, args: Record<string, unknown>, onProgress?: (p: Progress) => void): Promise<ToolCallResult>;
  listResources(): Promise<ListedResource[]>;
  readResource(uri: string): Promise<ResourceContents[]>;
  close(): Promise<void>;
}

export interface ListedResource {
  uri: string;
  name: string;
  title?: string;
  mimeType?: string;
}

export interface ResourceContents {
  uri: string;
  mimeType?: string;
  text?: string;
}

export interface ConnectOptions {
  /** Extra headers on every request, e.g. `Authorization: Bearer …`. */
  headers?: Record<string, string>;
  /** Per-request timeout (ms); the SDKs default to 60 s. */
  timeoutMs?: number;
  /** Declares form elicitation and answers every `elicitation/create` with this (the "user"). */
  elicit?: (message: string) => ElicitReply | Promise<ElicitReply>;
}

export type ElicitReply = { action: "accept"; content: Record<string, string | number | boolean> } | { action: "decline" } | { action: "cancel" };

function v2Options(kind: McpClientKind, elicit: boolean): ConstructorParameters<typeof Client>[1] {
  const capabilities = elicit ? { capabilities: { elicitation: { form: {} } } } : {};
  if (kind === "v2-2026") return { versionNegotiation: { mode: { pin: "2026-07-28" } }, ...capabilities };
  // 2025-06-18 declares form elicitation as `elicitation: {}` (modes came with 2025-11-25).
  if (kind.endsWith("2025-06-18")) return { supportedProtocolVersions: ["2025-06-18"], ...(elicit ? { capabilities: { elicitation: {} } } : {}) };
  return capabilities;
}

async function connectV2(kind: McpClientKind, url: URL, options: ConnectOptions): Promise<McpTestClient> {
  const client = new Client({ name: `slipsnisse-e2e-${kind}`, version: "0.0.0" }, v2Options(kind, options.elicit !== undefined));
  const { elicit } = options;
  if (elicit) client.setRequestHandler("elicitation/create", async (request) => elicit(request.params.message));
  const requestInit = { headers: options.headers ?? {} };
  const transport = kind.startsWith("v2-sse") ? new SSEClientTransport(url, { requestInit }) : new StreamableHTTPClientTransport(url, { requestInit });
  await client.connect(transport);
  const timeout = options.timeoutMs;
  return {
    kind,
    protocolVersion: client.getNegotiatedProtocolVersion(),
    // `bypass`: the v2 client caches lists for the server's ttlMs; the tests measure the server.
    listTools: async () => (await client.listTools(undefined, { cacheMode: "bypass", timeout })).tools,
    callTool: async (name, args, onProgress) =>
      toToolCallResult(await client.callTool({ name, arguments: args }, { timeout, onprogress: onProgress, resetTimeoutOnProgress: true })),
    listResources: async () => (await client.listResources(undefined, { cacheMode: "bypass", timeout })).resources,
    readResource: async (uri) => (await client.readResource({ uri }, { timeout })).contents,
    close: () => client.close(),
  };
}

async function connectV1(kind: McpClientKind, url: URL, options: ConnectOptions): Promise<McpTestClient> {
  const { elicit } = options;
  const client = new ClientV1({ name: `slipsnisse-e2e-${kind}`, version: "0.0.0" }, elicit ? { capabilities: { elicitation: {} } } : {});
  if (elicit) client.setRequestHandler(ElicitRequestSchema, async (request) => elicit(request.params.message));
  const requestInit = { headers: options.headers ?? {} };
  const transport = kind === "v1-sse" ? new SSEClientTransportV1(url, { requestInit }) : new StreamableHTTPClientTransportV1(url, { requestInit });
  await client.connect(transport);
  const timeout = options.timeoutMs;
  return {
    kind,
    protocolVersion: transport instanceof StreamableHTTPClientTransportV1 ? transport.protocolVersion : undefined,
    listTools: async () => (await client.listTools(undefined, { timeout })).tools,
    callTool: async (name, args, onProgress) => {
      const result = await client.callTool({ name, arguments: args }, undefined, {
        timeout,
        onprogress: onProgress,
        resetTimeoutOnProgress: true,
      });
      return toToolCallResult(result);
    },
    listResources: async () => (await client.listResources(undefined, { timeout })).resources,
    readResource: async (uri) => (await client.readResource({ uri }, { timeout })).contents,
    close: () => client.close(),
  };
}

/** Connects one real MCP client of the given kind to `url` (e.g. `${dev.baseUrl}/mcp`). */
export async function connectMcpClient(kind: McpClientKind, url: string, options: ConnectOptions = {}): Promise<McpTestClient> {
  const target = new URL(url);
  return kind.startsWith("v1-") ? connectV1(kind, target, options) : connectV2(kind, target, options);
}

/** The text parts of a tool result, joined. */
export function resultText(result: ToolCallResult): string {
  return result.content.map((part) => part.text ?? "").join("");
}
