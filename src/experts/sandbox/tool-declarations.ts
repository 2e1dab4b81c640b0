/** One whitelisted tool as the script sees it. */
export interface DeclaredTool {
  name: string;
  description?: string;
  inputSchema: unknown;
}

/** Schemas nest; past this depth a type is written as `unknown` so the prompt stays bounded. */
const MAX_DEPTH = 4;
const MAX_DESCRIPTION_CHARS = 600;
const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/**
 * TypeScript-like declarations of the tools a script may call, from their input schemas and
 * descriptions: `declare const tools: { name(input: {...}): Promise<string> }`. A tool answers
 * the text the tool loop's model would read (cut to the expert's `max_tool_result_bytes`).
 */
export function toolDeclarations(tools: readonly DeclaredTool[]): string {
  const members = tools.map((tool) => {
    const doc = tool.description ? `  /** ${oneLine(tool.description)} */\n` : "";
    return `${doc}  ${key(tool.name)}(input: ${typeOf(tool.inputSchema, 1)}): Promise<string>;`;
  });
  return `declare const tools: {\n${members.join("\n")}\n};`;
}

function typeOf(schema: unknown, depth: number): string {
  if (!isObject(schema)) return "unknown";
  if (Array.isArray(schema.enum)) return schema.enum.map((value) => JSON.stringify(value)).join(" | ") || "never";
  if (schema.const !== undefined) return JSON.stringify(schema.const);
  const union = Array.isArray(schema.anyOf) ? schema.anyOf : Array.isArray(schema.oneOf) ? schema.oneOf : undefined;
  if (union) return union.map((part) => typeOf(part, depth)).join(" | ") || "unknown";
  const type = Array.isArray(schema.type) ? schema.type : [schema.type];
  const parts = type.map((one) => single(one, schema, depth));
  return [...new Set(parts)].join(" | ");
}

function single(type: unknown, schema: Record<string, unknown>, depth: number): string {
  switch (type) {
    case "string":
      return "string";
    case "number":
    case "integer":
      return "number";
    case "boolean":
      return "boolean";
    case "null":
      return "null";
    case "array":
      return depth >= MAX_DEPTH ? "unknown[]" : `Array<${typeOf(schema.items, depth + 1)}>`;
    case "object":
      return objectType(schema, depth);
    default:
      return isObject(schema.properties) ? objectType(schema, depth) : "unknown";
  }
}

function objectType(schema: Record<string, unknown>, depth: number): string {
  const properties = isObject(schema.properties) ? Object.entries(schema.properties) : [];
  if (properties.length === 0) return "Record<string, unknown>";
  if (depth >= MAX_DEPTH) return "Record<string, unknown>";
  const required = new Set(Array.isArray(schema.required) ? schema.required.filter((name) => typeof name === "string") : []);
  const pad = "  ".repeat(depth + 1);
  const lines = properties.map(([name, property]) => {
    const description = isObject(property) && typeof property.description === "string" ? ` // ${oneLine(property.description)}` : "";
    return `${pad}${key(name)}${required.has(name) ? "" : "?"}: ${typeOf(property, depth + 1)};${description}`;
  });
  return `{\n${lines.join("\n")}\n${"  ".repeat(depth)}}`;
}

function key(name: string): string {
  return IDENTIFIER.test(name) ? name : JSON.stringify(name);
}

/** Descriptions come from downstream servers: one line, bounded, no comment terminators. */
function oneLine(text: string): string {
  const flat = text.replace(/\s+/g, " ").replaceAll("*/", "* /").trim();
  return flat.length > MAX_DESCRIPTION_CHARS ? `${flat.slice(0, MAX_DESCRIPTION_CHARS)}…` : flat;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
