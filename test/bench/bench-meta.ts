/**
 * The result `_meta` key under which the Worker reports run usage (src/mcp/delivery/expert-tool-result.ts).
 * Repeated here rather than imported: that module pulls in the MCP server SDK for types only,
 * and the bench reads only the key.
 */
export const META_USAGE_KEY = "slipsnisse.dev/usage";
