import type { CallToolResult } from "@modelcontextprotocol/client";
import type { DownstreamTool, ToolCallOptions, ToolSource } from "../../src/downstream/downstream-types";

export interface FakeTool {
  description?: string;
  inputSchema?: DownstreamTool["inputSchema"];
  /** What the call returns; a function sees the arguments and the call's signal. */
  result?: CallToolResult | ((args: Record<string, unknown>, signal: AbortSignal | undefined) => Promise<CallToolResult> | CallToolResult);
}

export interface RecordedCall {
  serverId: string;
  toolName: string;
  args: Record<string, unknown>;
  startedAt: number;
  hadSignal: boolean;
}

/** A ToolSource over in-memory servers that records every listTools/callTool it receives. */
export class FakeToolSource implements ToolSource {
  readonly calls: RecordedCall[] = [];
  readonly listed: string[] = [];

  constructor(
    private readonly servers: Record<string, Record<string, FakeTool>>,
    private readonly failingServers: Record<string, Error> = {},
  ) {}

  async listTools(serverId: string): Promise<readonly DownstreamTool[]> {
    this.listed.push(serverId);
    const failure = this.failingServers[serverId];
    if (failure) throw failure;
    const tools = this.servers[serverId];
    if (!tools) throw new Error(`no such fake server ${serverId}`);
    return Object.entries(tools).map(([name, tool]) => ({
      name,
      description: tool.description ?? `fake ${name}`,
      inputSchema: tool.inputSchema ?? { type: "object", properties: { q: { type: "string" } } },
    }));
  }

  async callTool(serverId: string, toolName: string, args: Record<string, unknown>, options?: ToolCallOptions): Promise<CallToolResult> {
    this.calls.push({ serverId, toolName, args, startedAt: Date.now(), hadSignal: options?.signal !== undefined });
    const tool = this.servers[serverId]?.[toolName];
    if (!tool) throw new Error(`fake server ${serverId} has no tool ${toolName}`);
    const result = tool.result ?? { content: [{ type: "text", text: `${toolName} result` }] };
    return typeof result === "function" ? result(args, options?.signal) : result;
  }
}

export function textResult(text: string): CallToolResult {
  return { content: [{ type: "text", text }] };
}

/** Resolves after `ms`, or rejects when `signal` aborts first (like a well-behaved server call). */
export function wait(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      "abort",
      () => {
        clearTimeout(timer);
        reject(signal.reason);
      },
      { once: true },
    );
  });
}
