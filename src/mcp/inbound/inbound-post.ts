import { CLIENT_CAPABILITIES_META_KEY, classifyInboundRequest, type JSONRPCRequest, type RequestId } from "@modelcontextprotocol/server";
import type { ClientReply } from "../../experts/protocol/client-replies";
import { type ClientProfile, eraOf, profileOf } from "./client-profile";
import type { PostedBody } from "./posted-body";

/*
 * One POST to the MCP endpoint, parsed and classified once, before anything answers it: what it
 * is (the route serveMcp takes), what it carries that is served outside the SDK (cancels,
 * replies to our mid-call requests), and who sent it (its ClientProfile). Every check after
 * this reads these fields; none looks at the body or the version string again.
 */

/** What a POST is, for routing. A batch (2025-03-26 clients may send one) is "other" unless it holds only replies or cancels. */
export type InboundKind =
  /** Only replies to requests this server sent mid-call: delivered to the waiting run, answered 202 here. */
  | "client-reply"
  /** Only `notifications/cancelled`: the SDK acknowledges it, the caller's session stops the run. */
  | "cancel"
  | "initialize"
  /** One `tools/call`: its server registers only the called expert. */
  | "tool-call"
  /** A `tasks/*` request (2025-11-25 core Tasks or the 2026-07-28 extension, by the profile). */
  | "tasks"
  /** A 2026-07-28 `subscriptions/listen` (listen-stream.ts). */
  | "listen"
  | "other";

/** The ids this server gives its mid-call requests (mid-call-requests.ts); a reply with another id is the SDK's business. */
export const MID_CALL_REQUEST_ID_PREFIX = "slipsnisse-req-";

export interface InboundPost {
  readonly body: PostedBody;
  /** The parsed body; undefined when it is no JSON (the SDK answers that with its parse error). */
  readonly json: unknown;
  readonly profile: ClientProfile;
  readonly kind: InboundKind;
  /** The request ids this POST cancels, from every `notifications/cancelled` in it. */
  readonly cancels: readonly RequestId[];
  /** Replies to this server's mid-call requests, wherever they are in the body. */
  readonly replies: readonly { id: string; reply: ClientReply }[];
  /** The one `tools/call` the POST is, with the expert it names and whether it asks to run as a task. */
  readonly toolCall: { readonly id: RequestId | undefined; readonly name: string; readonly asksTask: boolean } | undefined;
  /** Some message lists tools: annotations need the cached downstream tool lists. */
  readonly listsTools: boolean;
  /** The capabilities an `initialize` declared (undefined when it is none, or when it declared nothing). */
  readonly initialize: { readonly capabilities: unknown } | undefined;
  /**
   * A 2026-07-28 request of a method served before the SDK (tools/call, tasks/*,
   * subscriptions/listen), as the SDK's own ladder reads it (era, envelope, the Mcp-Method and
   * Mcp-Name headers against the body); undefined when the ladder refuses it, for the SDK to answer.
   */
  readonly modern: JSONRPCRequest | undefined;
}

type Message = Record<string, unknown>;

function asMessage(value: unknown): Message | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Message) : undefined;
}

function isRequestId(value: unknown): value is RequestId {
  return typeof value === "string" || typeof value === "number";
}

/** A JSON-RPC 2.0 response to one of our mid-call requests, as the run reads it; undefined for anything else. */
function replyOf(message: Message): { id: string; reply: ClientReply } | undefined {
  const id = message.id;
  if (message.jsonrpc !== "2.0" || typeof id !== "string" || !id.startsWith(MID_CALL_REQUEST_ID_PREFIX) || "method" in message) return undefined;
  const result = asMessage(message.result);
  if (result) return { id, reply: { result } };
  const error = asMessage(message.error);
  if (error && typeof error.code === "number" && typeof error.message === "string")
    return { id, reply: { error: { code: error.code, message: error.message } } };
  return undefined;
}

function cancelOf(message: Message): RequestId | undefined {
  if (message.jsonrpc !== "2.0" || message.method !== "notifications/cancelled") return undefined;
  const requestId = asMessage(message.params)?.requestId;
  return isRequestId(requestId) ? requestId : undefined;
}

/** The profile of a request without a body to classify (a GET or a DELETE): its headers say all there is. */
export function profileOfBodiless(request: Request): ClientProfile {
  return profileOf({
    transport: "streamable-http",
    revision: request.headers.get("mcp-protocol-version") ?? undefined,
    clientSessionId: request.headers.get("mcp-session-id") ?? undefined,
  });
}

const SERVED_BEFORE_SDK = /^(tools\/call|tasks\/.+|subscriptions\/listen)$/;

/**
 * Classifies a POST whose body passed the early checks (early-refusals.ts: depth, sizes).
 * `request` gives the headers: MCP-Protocol-Version, Mcp-Session-Id, Mcp-Method and Mcp-Name.
 */
export function classifyPost(request: Request, body: PostedBody): InboundPost {
  const json = body.json();
  const batch = Array.isArray(json);
  const entries: unknown[] = batch ? json : [json];
  const messages = entries.map(asMessage).filter((message): message is Message => message !== undefined);
  const single = batch ? undefined : messages[0];
  const method = typeof single?.method === "string" ? single.method : undefined;
  const header = request.headers.get("mcp-protocol-version") ?? undefined;
  const clientSessionId = request.headers.get("mcp-session-id") ?? undefined;

  const params = asMessage(single?.params);
  const initialize = method === "initialize" && params && clientSessionId === undefined ? { capabilities: params.capabilities } : undefined;
  const revision = header ?? (method === "initialize" && typeof params?.protocolVersion === "string" ? params.protocolVersion : undefined);
  // A 2026-07-28 request carries the client's capabilities in its envelope (the SDK reads the same).
  const envelope = asMessage(asMessage(params?._meta)?.[CLIENT_CAPABILITIES_META_KEY]);
  const profile = profileOf({
    transport: "streamable-http",
    revision,
    clientSessionId,
    capabilities: initialize ? initialize.capabilities : eraOf(revision) === "2026-07-28" ? envelope : undefined,
  });

  const cancels: RequestId[] = [];
  const replies: { id: string; reply: ClientReply }[] = [];
  for (const message of messages) {
    const cancel = cancelOf(message);
    if (cancel !== undefined) cancels.push(cancel);
    const reply = replyOf(message);
    if (reply) replies.push(reply);
  }
  const name = method === "tools/call" ? params?.name : undefined;
  const toolCall = typeof name === "string" ? { id: isRequestId(single?.id) ? single.id : undefined, name, asksTask: params?.task !== undefined } : undefined;
  const modern = profile.era === "2026-07-28" && method !== undefined && SERVED_BEFORE_SDK.test(method) ? modernRequestOf(request, json, header) : undefined;

  return {
    body,
    json,
    profile,
    kind: kindOf(request, method, entries.length, replies.length, cancels.length),
    cancels,
    replies,
    toolCall,
    listsTools: messages.some((message) => message.method === "tools/list"),
    initialize,
    modern,
  };
}

function kindOf(request: Request, method: string | undefined, messages: number, replies: number, cancels: number): InboundKind {
  if (messages > 0 && replies === messages) return "client-reply";
  if (messages > 0 && cancels === messages) return "cancel";
  if (method === "initialize") return "initialize";
  if (method === "tools/call") return "tool-call";
  if (method?.startsWith("tasks/")) return "tasks";
  // SEP-2243: a 2026-07-28 request names its method in Mcp-Method; without it the SDK answers
  // (refusing a listen request with -32020), so no other request pays a look at its body here.
  if (method === "subscriptions/listen" && request.headers.get("mcp-method") === "subscriptions/listen") return "listen";
  return "other";
}

function modernRequestOf(request: Request, json: unknown, version: string | undefined): JSONRPCRequest | undefined {
  if (json === undefined || version === undefined) return undefined;
  const route = classifyInboundRequest({
    httpMethod: request.method,
    protocolVersionHeader: version,
    mcpMethodHeader: request.headers.get("mcp-method") ?? undefined,
    mcpNameHeader: request.headers.get("mcp-name") ?? undefined,
    body: json,
  });
  return route.kind === "modern" && route.messageKind === "request" ? route.message : undefined;
}
