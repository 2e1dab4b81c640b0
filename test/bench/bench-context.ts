import type { CatalogInput } from "../../src/catalog/catalog-schema";
import type { FakeOpenAIServer } from "../e2e/harness/fake-openai-server";
import { connectMcpClient, type McpClientKind, type McpTestClient, type ToolCallResult } from "../e2e/harness/mcp-clients";
import type { WranglerDev } from "../e2e/harness/wrangler-dev";
import type { ManyToolsServer } from "./many-tools-server";

/** One figure of the report. `pass` is null for figures reported without a target. */
export interface Figure {
  id: string;
  title: string;
  value: string;
  target: string;
  pass: boolean | null;
  /** Where the time goes when a target is missed, or what the figure includes. */
  note?: string;
  details?: Record<string, unknown>;
}

export interface SampleSizes {
  samples: number;
  warmup: number;
  maxMs: number;
}

export interface BenchContext {
  dev: WranglerDev;
  /** The frozen copy of the project wrangler runs from (see project-snapshot.ts). */
  projectDir: string;
  fake: FakeOpenAIServer;
  /** The fixture echo server's tagged base (for /stats) and its MCP endpoint. */
  echoBase: string;
  echoMcpUrl: string;
  wide: ManyToolsServer[];
  /** The client kind every latency figure uses on both arms (the 2025 handshake, as claude.ai). */
  kind: McpClientKind;
  sizes: SampleSizes;
  /** The catalog loaded at start (a second wrangler dev, as in the AB figure, loads it too). */
  catalog: CatalogInput;
  connect(path: string): Promise<McpTestClient>;
  /** Reloads the catalog (a changed document, so every compiled cache is cold). */
  reloadCatalog(generation: number): Promise<void>;
}

export function createConnector(baseUrl: string, kind: McpClientKind): (path: string) => Promise<McpTestClient> {
  return (path) => connectMcpClient(kind, path.startsWith("http") ? path : `${baseUrl}${path}`, { timeoutMs: 120_000 });
}

/**
 * The bench catalog's experts by the tool steps they make (the fake model's script decides), with
 * the query that asks for them: one table for every figure that compares 0, 1 and 5 steps.
 */
export const TOOL_STEP_SCENARIOS = [
  { toolSteps: 0, expert: "no_tools", query: "hi" },
  { toolSteps: 1, expert: "one_call", query: "go" },
  { toolSteps: 5, expert: "many_steps", query: "steps=5" },
] as const;

/** Calls an expert and fails loudly on an error result: a bench must not time failures. */
export async function callExpert(client: McpTestClient, name: string, query: string): Promise<ToolCallResult> {
  const result = await client.callTool(name, { query });
  if (result.isError) {
    const text = result.content.map((part) => part.text ?? "").join("");
    throw new Error(`expert ${name}("${query}") answered an error: ${text.slice(0, 1000)}`);
  }
  return result;
}

/**
 * `total` calls over `clients`, one lane per client: each lane calls again as soon as its last
 * call returns, so `clients.length` calls are in flight (stopping early at `deadline`, if given).
 */
export async function callInLanes<Client>(
  clients: readonly Client[],
  total: number,
  call: (client: Client) => Promise<unknown>,
  deadline = Number.POSITIVE_INFINITY,
): Promise<void> {
  let started = 0;
  await Promise.all(
    clients.map(async (client) => {
      while (started < total && performance.now() < deadline) {
        started += 1;
        await call(client);
      }
    }),
  );
}

export async function callDirect(client: McpTestClient, name: string, args: Record<string, unknown>): Promise<ToolCallResult> {
  const result = await client.callTool(name, args);
  if (result.isError) throw new Error(`downstream ${name} answered an error: ${JSON.stringify(result.content).slice(0, 500)}`);
  return result;
}
