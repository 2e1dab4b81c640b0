import { Validator, type Schema } from "@cfworker/json-schema";
import type { PathSegment } from "../catalog-problems";
import type { FindingSink } from "./finding-sink";
import { isRawObject } from "./raw-json";

const JSON_TYPES = new Set(["object", "array", "string", "number", "integer", "boolean", "null"]);
const SUBSCHEMA_MAPS = new Set(["properties", "patternProperties", "$defs", "definitions", "dependentSchemas"]);
const SUBSCHEMA_LISTS = new Set(["allOf", "anyOf", "oneOf", "prefixItems"]);
const SUBSCHEMAS = new Set(["items", "additionalProperties", "not", "if", "then", "else", "contains", "propertyNames"]);

/** Why a field must be an object schema, said in its error message. */
const OBJECT_REASONS = {
  arguments: "MCP tool inputs are always JSON objects",
  output_schema: "it becomes the MCP tool's outputSchema, and MCP structured results are always JSON objects",
  json_schema: "an eval checks a structured answer, and structured answers are always JSON objects",
} as const;

/**
 * An expert's `arguments` becomes the MCP tool's inputSchema (which MCP requires to be an object
 * schema) and validates calls at runtime with @cfworker/json-schema (Ajv cannot run on Workers),
 * so it has to be accepted by that validator now rather than fail on the first call.
 */
export function checkArgumentsSchema(schema: unknown, at: readonly PathSegment[], sink: FindingSink): void {
  checkObjectSchema("arguments", schema, at, sink);
}

/** The same holds for `output_schema`: the outputSchema, and the validator of every final answer. */
export function checkObjectSchema(field: keyof typeof OBJECT_REASONS, schema: unknown, at: readonly PathSegment[], sink: FindingSink): void {
  if (!isRawObject(schema)) return; // zod reports the wrong type
  if (schema.type !== "object") {
    sink.add(
      [...at, "type"],
      `\`${field}\` must be a JSON Schema object schema: ${OBJECT_REASONS[field]}`,
      'set `"type": "object"` and describe each field under `properties`, e.g. {"type":"object","properties":{"query":{"type":"string"}},"required":["query"]}',
    );
  }
  const before = sink.findings.length;
  walk(schema, schema, [...at], sink);
  if (sink.findings.length > before) return; // the walk named the broken keyword more precisely
  try {
    // The validator annotates the schema it is given; compile a copy so the catalog stays plain JSON.
    new Validator(structuredClone(schema) as Schema, "2020-12").validate({});
  } catch (error) {
    sink.add(
      [...at],
      `\`${field}\` does not compile as a JSON Schema: ${error instanceof Error ? error.message : String(error)}`,
      "correct the schema so @cfworker/json-schema accepts it (check `$ref`, `$id` and `pattern` values)",
    );
  }
}

function walk(root: Record<string, unknown>, node: unknown, at: PathSegment[], sink: FindingSink): void {
  if (!isRawObject(node)) return;
  checkKeywords(root, node, at, sink);
  for (const [key, value] of Object.entries(node)) {
    if (SUBSCHEMA_MAPS.has(key) && isRawObject(value)) {
      for (const [name, sub] of Object.entries(value)) walk(root, sub, [...at, key, name], sink);
    } else if (SUBSCHEMA_LISTS.has(key) && Array.isArray(value)) {
      for (const [index, sub] of value.entries()) walk(root, sub, [...at, key, index], sink);
    } else if (SUBSCHEMAS.has(key)) {
      walk(root, value, [...at, key], sink);
    }
  }
}

function checkKeywords(root: Record<string, unknown>, node: Record<string, unknown>, at: PathSegment[], sink: FindingSink): void {
  const types = Array.isArray(node.type) ? node.type : node.type === undefined ? [] : [node.type];
  for (const type of types.filter((t) => typeof t !== "string" || !JSON_TYPES.has(t))) {
    sink.add([...at, "type"], `\`${String(type)}\` is not a JSON Schema type`, `use one of: ${[...JSON_TYPES].join(", ")}`);
  }
  if (typeof node.pattern === "string" && !compiles(node.pattern)) {
    sink.add(
      [...at, "pattern"],
      "`pattern` is not a valid regular expression (ECMAScript, unicode mode)",
      "fix the regular expression; escape literal characters such as `(` or `[` with `\\`",
    );
  }
  if (node.required !== undefined && !(Array.isArray(node.required) && node.required.every((r) => typeof r === "string"))) {
    sink.add([...at, "required"], "`required` must be an array of property names", 'write e.g. `"required": ["query"]`');
  }
  if (typeof node.$ref === "string" && !resolvesLocally(root, node.$ref)) {
    sink.add(
      [...at, "$ref"],
      `\`$ref\` "${node.$ref}" does not point into this schema; remote references cannot be fetched when the tool is called`,
      "point it at a definition in this schema, e.g. `#/$defs/name`, or inline the referenced schema",
    );
  }
}

function compiles(pattern: string): boolean {
  try {
    new RegExp(pattern, "u");
    return true;
  } catch {
    return false;
  }
}

function resolvesLocally(root: Record<string, unknown>, ref: string): boolean {
  if (!ref.startsWith("#")) return false;
  let node: unknown = root;
  for (const raw of ref.slice(1).split("/").slice(1)) {
    const token = decodeURIComponent(raw).replace(/~1/g, "/").replace(/~0/g, "~");
    if (Array.isArray(node)) node = node[Number(token)];
    else if (isRawObject(node)) node = node[token];
    else return false;
  }
  return node !== undefined;
}
