import { z } from "zod";
import type { DownstreamTool } from "./downstream-types";

/**
 * The stored shape of a downstream tool (what DownstreamTool keeps of the MCP Tool). Cached
 * lists are parsed with this when read back: KV content is outside this isolate's control.
 */
export const downstreamToolSchema = z.object({
  name: z.string().min(1),
  description: z.string().optional(),
  inputSchema: z.looseObject({
    type: z.literal("object"),
    properties: z.record(z.string(), z.json()).optional(),
    required: z.array(z.string()).optional(),
  }),
  annotations: z
    .looseObject({
      title: z.string().optional(),
      readOnlyHint: z.boolean().optional(),
      destructiveHint: z.boolean().optional(),
      idempotentHint: z.boolean().optional(),
      openWorldHint: z.boolean().optional(),
    })
    .optional(),
});

/** Keep only the fields the runner needs (a server's extra fields are not cached); null if malformed. */
export function toDownstreamTool(tool: unknown): DownstreamTool | null {
  const parsed = downstreamToolSchema.safeParse(tool);
  if (!parsed.success) return null;
  const { name, description, inputSchema, annotations } = parsed.data;
  return {
    name,
    inputSchema,
    ...(description === undefined ? {} : { description }),
    ...(annotations === undefined ? {} : { annotations }),
  };
}
