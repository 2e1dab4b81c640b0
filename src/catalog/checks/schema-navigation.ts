import { z } from "zod";
import type { PathSegment } from "../catalog-problems";

/** The zod schema that governs the value at `path` (used to list the keys an object allows). */
export function schemaAtPath(root: z.core.$ZodType, path: readonly PathSegment[]): z.core.$ZodType | undefined {
  let schema: z.core.$ZodType | undefined = unwrap(root);
  for (const segment of path) {
    if (schema instanceof z.ZodObject && typeof segment === "string") {
      const shape: Record<string, z.core.$ZodType> = schema.shape;
      schema = shape[segment];
    } else if (schema instanceof z.ZodRecord) {
      schema = schema.valueType;
    } else if (schema instanceof z.ZodArray && typeof segment === "number") {
      schema = schema.element;
    } else {
      return undefined;
    }
    schema = schema === undefined ? undefined : unwrap(schema);
  }
  return schema;
}

export function allowedKeys(root: z.core.$ZodType, path: readonly PathSegment[]): string[] {
  const schema = schemaAtPath(root, path);
  return schema instanceof z.ZodObject ? Object.keys(schema.shape) : [];
}

function unwrap(schema: z.core.$ZodType): z.core.$ZodType {
  let current = schema;
  for (let depth = 0; depth < 8; depth++) {
    if (current instanceof z.ZodDefault || current instanceof z.ZodOptional) current = current.unwrap();
    else break;
  }
  return current;
}
