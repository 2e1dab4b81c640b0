import { z } from "zod";
import type { PostedBody } from "./posted-body";

const requestIdSchema = z.union([z.string(), z.number()]);

const cancelledNotificationSchema = z.object({
  jsonrpc: z.literal("2.0"),
  method: z.literal("notifications/cancelled"),
  params: z.looseObject({ requestId: requestIdSchema }),
});

/**
 * The request ids a POSTed JSON-RPC body cancels: a single `notifications/cancelled`, or every
 * one in a batch array (2025-03-26 clients may batch). Anything else in the body is left to the
 * MCP handler; bodies that cannot hold a cancel are not parsed at all.
 */
export function cancelledRequestIds(body: PostedBody): Array<string | number> {
  if (!body.includes("notifications/cancelled")) return [];
  const json = body.json();
  if (json === undefined) return [];
  const ids: Array<string | number> = [];
  for (const message of Array.isArray(json) ? json : [json]) {
    const parsed = cancelledNotificationSchema.safeParse(message);
    if (parsed.success) ids.push(parsed.data.params.requestId);
  }
  return ids;
}
