import type { CallToolResult } from "@modelcontextprotocol/client";

/**
 * Minimal private flattening of a downstream CallToolResult into text a model can read.
 * The downstream module is adding `src/downstream/tool-result-text.ts`; once it lands this file
 * should be replaced by it (kept here so the runner does not wait on it).
 */
type ContentBlock = CallToolResult["content"][number];

function blockText(block: ContentBlock): string {
  switch (block.type) {
    case "text":
      return block.text;
    case "image":
    case "audio":
      return `[${block.type} ${block.mimeType}, ${Math.floor((block.data.length * 3) / 4)} bytes, not shown]`;
    case "resource_link":
      return `[resource ${block.name}: ${block.uri}]`;
    case "resource": {
      const resource = block.resource;
      return "text" in resource ? `[resource ${resource.uri}]\n${resource.text}` : `[binary resource ${resource.uri}, not shown]`;
    }
    default:
      return "";
  }
}

export function toolResultText(result: CallToolResult): string {
  const parts = (result.content ?? []).map(blockText).filter((part) => part.length > 0);
  if (parts.length === 0 && result.structuredContent !== undefined) {
    parts.push(JSON.stringify(result.structuredContent));
  }
  return parts.join("\n\n");
}
