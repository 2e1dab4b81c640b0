import { z } from "zod";

const requestIdSchema = z.union([z.string(), z.number()]);

const cancelledNotificationSchema = z.object({
  jsonrpc: z.literal("2.0"),
  method: z.literal("notifications/cancelled"),
  params: z.looseObject({ requestId: requestIdSchema }),
});

/**
 * The request ids a POSTed JSON-RPC body cancels: a single `notifications/cancelled`, or every
 * one in a batch array (2025-03-26 clients may batch). Anything else in the body is left to the
 * MCP handler. The request is cloned, so the handler still reads the body; bodies that cannot
 * hold a cancel are not parsed at all.
 */
export async function cancelledRequestIds(request: Request): Promise<Array<string | number>> {
  if (request.method !== "POST" || request.body === null) return [];
  let text: string;
  try {
    text = await request.clone().text();
  } catch {
    return [];
  }
  if (!text.includes("notifications/cancelled")) return [];
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return [];
  }
  const ids: Array<string | number> = [];
  for (const message of Array.isArray(body) ? body : [body]) {
    const parsed = cancelledNotificationSchema.safeParse(message);
    if (parsed.success) ids.push(parsed.data.params.requestId);
  }
  return ids;
}
