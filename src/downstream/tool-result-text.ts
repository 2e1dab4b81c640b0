import type { CallToolResult, ContentBlock } from "@modelcontextprotocol/client";

export interface ToolResultText {
  /** What the model reads. */
  text: string;
  /** UTF-8 size of `text`, the unit of the expert's max_tool_result_bytes budget. */
  bytes: number;
  isError: boolean;
}

const encoder = new TextEncoder();

export function utf8Bytes(text: string): number {
  return encoder.encode(text).length;
}

/** Decoded size of base64 data without decoding it. */
function base64Bytes(data: string): number {
  const padding = data.endsWith("==") ? 2 : data.endsWith("=") ? 1 : 0;
  return Math.max(0, Math.floor((data.length * 3) / 4) - padding);
}

/**
 * One content block as text. Binary payloads are described, never inlined: base64 costs the
 * model tokens and tells it nothing.
 */
function blockText(block: ContentBlock): string {
  switch (block.type) {
    case "text":
      return block.text;
    case "image":
    case "audio":
      return `[${block.type}: ${block.mimeType}, ${base64Bytes(block.data)} bytes]`;
    case "resource_link":
      return `[resource link: ${block.name} <${block.uri}>${block.mimeType ? `, ${block.mimeType}` : ""}${block.size === undefined ? "" : `, ${block.size} bytes`}]`;
    case "resource": {
      const { resource } = block;
      if ("text" in resource && typeof resource.text === "string") return `[resource ${resource.uri}]\n${resource.text}`;
      const size = "blob" in resource && typeof resource.blob === "string" ? `, ${base64Bytes(resource.blob)} bytes` : "";
      return `[resource: ${resource.uri}${resource.mimeType ? `, ${resource.mimeType}` : ""}${size}]`;
    }
    default:
      return `[${(block as { type: string }).type} content]`;
  }
}

/**
 * Flatten a tool result into the text the model reads: text blocks joined by blank lines;
 * structuredContent as JSON when there is no text; other blocks described by type and size.
 */
export function toolResultText(result: CallToolResult): ToolResultText {
  const blocks = result.content ?? [];
  const hasText = blocks.some((block) => block.type === "text");
  const parts = blocks.map(blockText);
  if (!hasText && result.structuredContent !== undefined) parts.unshift(JSON.stringify(result.structuredContent));
  const text = parts.join("\n\n");
  return { text, bytes: utf8Bytes(text), isError: result.isError === true };
}
