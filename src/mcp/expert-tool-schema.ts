import type { JsonSchemaType } from "@modelcontextprotocol/server";
import type { ExpertConfig } from "../catalog/catalog-schema";

export const THREAD_ARGUMENT = "thread";

const threadProperty = {
  type: "string",
  description: "Optional. The thread handle from an earlier answer of this expert, to ask a follow-up in the same conversation.",
} as const;

/**
 * The schema the orchestrator sees: the expert's own arguments plus the optional `thread`
 * handle. The catalog validator guarantees `arguments` is an object schema.
 */
export function expertInputSchema(expert: ExpertConfig): JsonSchemaType {
  const schema = expert.arguments as JsonSchemaType & { properties?: Record<string, unknown> };
  if (schema.properties?.[THREAD_ARGUMENT] !== undefined) return schema;
  return { ...schema, type: "object", properties: { ...schema.properties, [THREAD_ARGUMENT]: threadProperty } };
}

/** Splits the validated arguments into the expert's own and the thread handle. */
export function splitThread(args: Record<string, unknown>): { args: Record<string, unknown>; thread?: string } {
  const { [THREAD_ARGUMENT]: thread, ...rest } = args;
  return typeof thread === "string" && thread.length > 0 ? { args: rest, thread } : { args: rest };
}
