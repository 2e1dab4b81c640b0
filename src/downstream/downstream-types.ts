import type { CallToolResult, Tool } from "@modelcontextprotocol/client";

/** A tool as listed by a downstream server (only what the runner and the cache need). */
export type DownstreamTool = Pick<Tool, "name" | "description" | "inputSchema" | "annotations">;

/**
 * A tool the server lists but the pool does not offer, and why (e.g. its definition changed
 * since it was pinned). `reason` reads after "tool X on server Y ".
 */
export interface WithheldTool {
  name: string;
  reason: string;
}

export interface ToolCallOptions {
  signal?: AbortSignal;
  /** The model's id of the call, so the run's trace can name the call's own span as the request's parent. */
  toolCallId?: string;
}

/**
 * What the runner needs from downstream servers. The ExpertSession's pool implements it over
 * warm MCP clients; tests implement it directly. Both methods throw `DownstreamUnavailableError`
 * (naming the server) when the server cannot be reached.
 */
export interface ToolSource {
  /** The skill whose servers these are, for messages that point at its admin routes. */
  readonly skill?: string;
  listTools(serverId: string, options?: ToolCallOptions): Promise<readonly DownstreamTool[]>;
  callTool(serverId: string, toolName: string, args: Record<string, unknown>, options?: ToolCallOptions): Promise<CallToolResult>;
  /**
   * Tools of the server's latest listing that listTools left out (call after listTools). Optional:
   * sources that withhold nothing need not implement it.
   */
  withheldTools?(serverId: string): readonly WithheldTool[];
}

/** Connection lifecycle of one downstream server inside a session (reported by health). */
export type ConnectionState =
  | { status: "idle" }
  | { status: "connecting"; since: number }
  | { status: "ready"; since: number; protocolVersion?: string; transport: "streamable-http" | "sse" | "binding" }
  | { status: "failed"; since: number; error: string; attempts: number }
  | { status: "backing-off"; until: number; error: string; attempts: number };
