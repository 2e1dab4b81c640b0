import { Validator } from "@cfworker/json-schema";
import type { Schema as ValidatorSchema } from "@cfworker/json-schema";
import { jsonSchema } from "ai";
import type { JSONSchema7, Schema } from "ai";
import type { DownstreamTool } from "../../downstream/downstream-types";

/**
 * A downstream tool's inputSchema as an AI SDK schema that validates the model's arguments, so
 * a malformed call goes back to the model as a tool error instead of to the server. The cfworker
 * validator is used because Ajv compiles with `new Function`, which workerd forbids.
 */
export function toolInputSchema(inputSchema: DownstreamTool["inputSchema"]): Schema<unknown> {
  const cached = adapted.get(inputSchema);
  if (cached !== undefined) return cached;
  const schema = adaptSchema(inputSchema);
  adapted.set(inputSchema, schema);
  return schema;
}

/**
 * By the listing's own schema object: the pool hands every run the same listing until it is
 * fetched again, and compiling a validator cost more per run than the run's own tool calls
 * (the schema and its validator hold no state between validations).
 */
const adapted = new WeakMap<DownstreamTool["inputSchema"], Schema<unknown>>();

function adaptSchema(inputSchema: DownstreamTool["inputSchema"]): Schema<unknown> {
  // MCP guarantees an object schema (type "object"); the SDK's parser already checked its shape.
  const schema = inputSchema as JSONSchema7;
  const validator = compile(inputSchema);
  return jsonSchema<unknown>(schema, {
    validate: (value) => {
      if (!validator) return { success: true, value };
      const result = safeValidate(validator, value);
      if (result.valid) return { success: true, value };
      const reasons = result.errors
        .filter((unit) => unit.keyword !== "properties")
        .slice(0, 3)
        .map((unit) => `${unit.instanceLocation || "#"}: ${unit.error}`);
      return { success: false, error: new Error(`arguments do not match the tool's input schema (${reasons.join("; ")})`) };
    },
  });
}

function compile(inputSchema: DownstreamTool["inputSchema"]): Validator | undefined {
  try {
    return new Validator(inputSchema as ValidatorSchema, "2020-12", false);
  } catch {
    // A schema the validator cannot read is left to the downstream server to enforce.
    return undefined;
  }
}

function safeValidate(validator: Validator, value: unknown): { valid: boolean; errors: Array<{ keyword: string; instanceLocation: string; error: string }> } {
  try {
    return validator.validate(value);
  } catch {
    return { valid: true, errors: [] };
  }
}
