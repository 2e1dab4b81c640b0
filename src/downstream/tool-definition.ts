import { canonicalJson, sha256Hex } from "./canonical-json";
import { toDownstreamTool } from "./downstream-tool-schema";
import type { DownstreamTool } from "./downstream-types";

/** A tool's definition as pinned: canonical JSON and its SHA-256 (hex). */
export interface ToolDefinition {
  tool: DownstreamTool;
  json: string;
  hash: string;
}

/**
 * Everything of a tool that reaches the model (name, description, inputSchema, annotations) in
 * canonical JSON, so key order never counts as a change but any other difference does.
 */
export async function toolDefinition(tool: DownstreamTool): Promise<ToolDefinition> {
  const { name, description, inputSchema, annotations } = tool;
  const json = canonicalJson({ name, description, inputSchema, annotations });
  return { tool, json, hash: await sha256Hex(json) };
}

/** A stored definition read back from D1 (checked again: the row came from a downstream server). */
export function parseToolDefinition(json: string): DownstreamTool | null {
  try {
    return toDownstreamTool(JSON.parse(json));
  } catch {
    return null;
  }
}
