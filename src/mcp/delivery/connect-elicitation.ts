import { type InputRequiredResult, inputRequired, inputResponse, type ServerContext } from "@modelcontextprotocol/server";
import { z } from "zod";
import type { ExpertCallResult } from "../../experts/core/call-types";
import type { ExpertConfig } from "../../catalog/catalog-schema";
import type { ConnectPrompter } from "../../experts/session/connection-gate";
import type { ClientRequester } from "./mid-call-requests";
import type { RequestStateSeal } from "./user-input";

/** Slipsnisse's origin for connect links: PUBLIC_URL, else the origin this request came to. */
export function originOf(env: Env, ctx: ServerContext, known?: string): { origin?: string } {
  const configured = env.PUBLIC_URL.replace(/\/+$/, "");
  if (configured) return { origin: configured };
  const url = ctx.http?.req?.url;
  if (url !== undefined) return { origin: new URL(url).origin };
  return known === undefined ? {} : { origin: known };
}

/**
 * On a call that can carry server-to-client requests (legacy SSE, or a stateless 2025 call from a
 * client that declared URL mode at `initialize`): `elicitation/create` in URL mode while the call waits, then `notifications/elicitation/complete` once the session
 * sees the flow finished (SEP-1036). The expert's user_input_timeout_ms bounds the wait.
 */
export function connectPrompter(ctx: ServerContext, expert: ExpertConfig, routed?: ClientRequester): ConnectPrompter {
  const timeout = expert.user_input_timeout_ms + 5_000;
  return async (event) => {
    if (event.kind === "complete") {
      const complete = { method: "notifications/elicitation/complete", params: { elicitationId: event.elicitationId } };
      if (routed) routed.notify(complete.method, complete.params);
      else await ctx.mcpReq.notify(complete);
      return "sent";
    }
    const params = { mode: "url" as const, message: event.message, url: event.url, elicitationId: event.elicitationId };
    // A stateless 2025 call: the request goes out on the call's stream and the reply comes back
    // through the user's session (mid-call-requests.ts); a client that fails it declined.
    if (routed) {
      const reply = await routed.request("elicitation/create", params, timeout);
      const action = "error" in reply ? undefined : urlReplySchema.safeParse(reply.result).data?.action;
      return action ?? "decline";
    }
    return (await ctx.mcpReq.elicitInput(params, { timeout })).action;
  };
}

const urlReplySchema = z.looseObject({ action: z.enum(["accept", "decline", "cancel"]) });

/** The key of the one embedded URL elicitation a connect answer carries (2026-07-28). */
const CONNECT_KEY = "slipsnisse_connect";

/**
 * What the `requestState` handle of a connect answer stands for (the session's request-states.ts): the
 * thread and the flow, which the member's own session and UserConnections object check again.
 */
const connectStateSchema = z
  .object({
    v: z.literal(1),
    kind: z.literal("connect"),
    thread: z.string().min(1).max(200).optional(),
    flowId: z.string().min(1).max(200),
    connection: z.enum(["user", "team"]),
  })
  .strict();

/** A 2026-07-28 answer asking the client to open the connect page (URL-mode elicitation as an input request). */
export async function connectInputRequired(result: ExpertCallResult, seal: RequestStateSeal): Promise<InputRequiredResult | undefined> {
  if (!result.connect) return undefined;
  const state = {
    v: 1,
    kind: "connect",
    flowId: result.connect.elicitationId,
    connection: result.connect.connection,
    ...(result.thread ? { thread: result.thread } : {}),
  };
  return inputRequired({
    inputRequests: { [CONNECT_KEY]: inputRequired.elicitUrl({ message: result.text, url: result.connect.url }) },
    requestState: await seal(state),
  });
}

/** A retried 2026-07-28 call answering our connect request: its thread, the flow, and whether the user went to the page. */
export function connectRetry(
  ctx: ServerContext,
  opened: unknown,
): { thread?: string; flowId: string; connection: "user" | "team"; accepted: boolean } | undefined {
  const state = connectStateSchema.safeParse(opened).data;
  if (!state) return undefined;
  const view = inputResponse(ctx.mcpReq.inputResponses, CONNECT_KEY);
  const { thread, flowId, connection } = state;
  return { ...(thread === undefined ? {} : { thread }), flowId, connection, accepted: view.kind === "elicit" && view.action === "accept" };
}
